package interop

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
)

// treesPolicy: everyone reads /store, writes need a token's scopes.
const treesPolicy = `
[[auth.namespace]]
prefix = "/store"
read = "public"
write = "token"
`

// linkedTree lays out, under root, a group's data the site linked into
// frank's areas (area*/glink -> ../../../group/data), a tree of frank's
// own and alice's file.
func linkedTree(t *testing.T, root string) {
	t.Helper()
	for f, data := range map[string]string{
		"group/data/f1": "group file 1", "group/data/sub/f2": "group file 2",
		"user/frank/area/own.txt": "frank's", "user/frank/area2/own.txt": "frank's",
		"user/frank/dir/own.txt": "frank's", "user/frank/dir/sub/keep": "kept",
		"user/alice/f": "alice's", "user/mallory/.keep": "",
	} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, area := range []string{"area", "area2"} {
		if err := os.Symlink("../../../group/data", filepath.Join(root, "user/frank", area, "glink")); err != nil {
			t.Fatal(err)
		}
	}
}

// holds reports whether root's file f holds data.
func holds(root, f, data string) bool {
	b, err := os.ReadFile(filepath.Join(root, f))
	return err == nil && string(b) == data
}

// TestTreesAndLinks makes the attacks on tree operations with the field's
// clients: curl, gfal2 and davix over https://, xrdfs over roots://, and
// xrdfs against a real xrootd side by side. Frank may change his own area
// only; the site linked a group's data into it.
func TestTreesAndLinks(t *testing.T) {
	for _, tool := range []string{"curl", "xrdfs", "gfal-rm", "davix-rm", "openssl"} {
		peers.Require(t, tool)
	}
	pool := t.TempDir()
	linkedTree(t, pool)
	o := startIssuerNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+treesPolicy)
	frank := o.token(t, "frank", "", "storage.read:/store,storage.create:/store/user/frank,storage.modify:/store/user/frank")
	mallory := o.token(t, "mallory", "", "storage.read:/store,storage.create:/store/user")
	groupIntact := func(t *testing.T) {
		t.Helper()
		if !holds(pool, "group/data/f1", "group file 1") || !holds(pool, "group/data/sub/f2", "group file 2") {
			t.Fatal("the group's data behind the link was changed")
		}
	}
	// curlAs sends method to path with token and headers, returning the
	// status and body.
	curlAs := func(token, method, path string, hdr ...string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		args := []string{"-sS", "--cacert", o.certFile, "-o", out, "-w", "%{http_code}", "-X", method, "-H", "Authorization: Bearer " + token}
		for _, h := range hdr {
			args = append(args, "-H", h)
		}
		if method == "PUT" {
			args = append(args, "--data-binary", "uploaded")
		}
		code, _ := run(t, true, "curl", append(args, o.httpsURL+path)...)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}

	t.Run("https: nothing through a link", func(t *testing.T) {
		for _, c := range []struct {
			method, path string
			hdr          []string
		}{
			{"DELETE", "/store/user/frank/area/glink/f1", nil},
			{"PUT", "/store/user/frank/area/glink/new", nil},
			{"MKCOL", "/store/user/frank/area/glink/d", nil},
			{"COPY", "/store/user/frank/area", []string{"Destination: /store/user/frank/copy"}},
			{"COPY", "/store/user/frank/area/glink/f1", []string{"Destination: /store/user/frank/stolen"}},
			{"MOVE", "/store/user/frank/area/glink", []string{"Destination: /store/user/frank/moved"}},
		} {
			code, body := curlAs(frank, c.method, c.path, c.hdr...)
			if code != "403" || !strings.Contains(body, "is a symbolic link") {
				t.Errorf("%s %s: %s %q, want 403 naming the link", c.method, c.path, code, body)
			}
		}
		groupIntact(t)
		for _, f := range []string{"user/frank/copy", "user/frank/stolen", "user/frank/moved", "group/data/new", "group/data/d"} {
			if _, err := os.Lstat(filepath.Join(pool, f)); err == nil {
				t.Errorf("%s was made", f)
			}
		}
		// gfal2 deletes a tree itself, entry by entry, and its listing
		// shows the link as a collection: the delete through it is refused.
		out, err := runEnv(t, []string{"BEARER_TOKEN=" + frank, "GFAL_PYTHONBIN=/usr/bin/python3"},
			"gfal-rm", "-r", "-D", "HTTP PLUGIN:INSECURE=true", o.httpsURL+"/store/user/frank/area2")
		if err == nil || !strings.Contains(out, "403") {
			t.Errorf("gfal-rm -r of a tree holding a link: %v, want the delete through the link refused\n%s", err, out)
		}
		groupIntact(t)
		// davix sends one DELETE: the box removes the link, not the data.
		if out, err := runEnv(t, nil, "davix-rm", "-k", "-H", "Authorization: Bearer "+frank, o.httpsURL+"/store/user/frank/area"); err != nil {
			t.Fatalf("davix-rm of a tree holding a link: %v\n%s", err, out)
		}
		if _, err := os.Lstat(filepath.Join(pool, "user/frank/area")); !os.IsNotExist(err) {
			t.Errorf("the tree is still there: %v", err)
		}
		groupIntact(t)
	})

	t.Run("https: refused before anything changes", func(t *testing.T) {
		for _, c := range []struct{ method, path, dest string }{
			{"COPY", "/store/user/frank/dir/own.txt", "/store/user/frank/dir"},
			{"MOVE", "/store/user/frank/dir", "/store/user/frank/dir/sub"},
			{"MOVE", "/store/user/frank/dir/sub", "/store/user/frank/dir"},
		} {
			if code, body := curlAs(frank, c.method, c.path, "Destination: "+c.dest, "Overwrite: T"); code != "403" {
				t.Errorf("%s %s to %s: %s %q, want 403", c.method, c.path, c.dest, code, body)
			}
			if !holds(pool, "user/frank/dir/own.txt", "frank's") || !holds(pool, "user/frank/dir/sub/keep", "kept") {
				t.Fatalf("%s %s to %s changed the tree before its refusal", c.method, c.path, c.dest)
			}
		}
	})

	t.Run("storage.create moves nothing", func(t *testing.T) {
		code, body := curlAs(mallory, "MOVE", "/store/user/alice/f", "Destination: /store/user/mallory/f")
		if code != "403" || !strings.Contains(body, "storage.modify scope for /store/user/alice/f") {
			t.Errorf("MOVE with create only: %s %q", code, body)
		}
		if code, body := curlAs(mallory, "PUT", "/store/user/alice/f"); code != "403" {
			t.Errorf("PUT over alice's file with create only: %s %q", code, body)
		}
		ca := certDir(t, o.fedNode)
		out, err := runEnv(t, xrdEnv(ca, mallory), "xrdfs", "roots://"+o.rootHost, "mv", "/store/user/alice/f", "/store/user/mallory/g")
		if err == nil || !strings.Contains(out, "storage.modify") {
			t.Errorf("xrdfs mv with create only: %v %s", err, out)
		}
		if !holds(pool, "user/alice/f", "alice's") {
			t.Fatal("alice's file was moved or replaced")
		}
		if code, body := curlAs(mallory, "PUT", "/store/user/mallory/new"); code != "201" || !holds(pool, "user/mallory/new", "uploaded") {
			t.Errorf("an upload with create only: %s %q", code, body)
		}
	})

	t.Run("root:// side by side with xrootd", func(t *testing.T) {
		peers.Require(t, "xrootd")
		data := t.TempDir()
		linkedTree(t, data)
		port, _ := peers.FreePort()
		x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{DataDir: data, Port: port, Name: "interop-trees", WorkDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Stop()
		// xrootd removes the group's file through the link (the difference
		// docs/root-protocol.md lists)...
		if out, err := run(t, true, "xrdfs", "127.0.0.1:"+strconv.Itoa(port), "rm", "/user/frank/area2/glink/f1"); err != nil || holds(data, "group/data/f1", "group file 1") {
			t.Errorf("xrootd no longer removes through a link (%v %s): update docs/root-protocol.md", err, out)
		}
		// ...a box refuses, naming the link.
		ca := certDir(t, o.fedNode)
		out, err := runEnv(t, xrdEnv(ca, frank), "xrdfs", "roots://"+o.rootHost, "rm", "/store/user/frank/area2/glink/f1")
		if err == nil || !strings.Contains(out, "/store/user/frank/area2/glink is a symbolic link") {
			t.Errorf("xrdfs rm through a link: %v %s", err, out)
		}
		groupIntact(t)
		if out, err := runEnv(t, xrdEnv(ca, frank), "xrdfs", "roots://"+o.rootHost, "rm", "/store/user/frank/area2/glink"); err != nil {
			t.Errorf("xrdfs rm of the link itself: %v %s", err, out)
		}
		if _, err := os.Lstat(filepath.Join(pool, "user/frank/area2/glink")); !os.IsNotExist(err) {
			t.Errorf("the link is still there: %v", err)
		}
		groupIntact(t)
	})
}
