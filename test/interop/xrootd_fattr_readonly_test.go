package interop

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"sitebox/test/peers"
)

// TestXrootdXattrReadOnlyExport changes attributes on a read-only export
// of xrootd 5.5 (all.export r/o, with an authorization database) and of
// sitebox (read_only = true, with a namespace policy), as a client
// allowed to change /ro/open but not /ro/closed. Both check the client's
// right first: 3010 where it has none, 3025 (read-only) where it has.
func TestXrootdXattrReadOnlyExport(t *testing.T) {
	for _, tool := range []string{"xrdfs", "xrootd"} {
		peers.Require(t, tool)
	}
	xdata, work := t.TempDir(), t.TempDir()
	writeAttrFiles(t, filepath.Join(xdata, "ro"))
	if err := os.WriteFile(filepath.Join(work, "authdb"), []byte("u * /ro/open a /ro lr / lr\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, _ := peers.FreePort()
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: xdata, Port: port, Name: "interop-fattr-ro-" + strconv.Itoa(port), WorkDir: work,
		Extra: []string{"all.export /ro r/o", "ofs.authorize 1", "acc.authdb " + filepath.Join(work, "authdb"),
			"sec.protocol unix", "sec.protbind * only unix"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)

	pool := t.TempDir()
	writeAttrFiles(t, pool)
	b := startIssuerNode(t, "ro", "A", "[[export]]\nprefix = \"/ro\"\nread_only = true\npools = ["+strconv.Quote(pool)+"]\n"+
		"[[auth.namespace]]\nprefix = \"/ro\"\nwrite = \"token\"\n")
	authz := "?authz=Bearer%20" + b.token(t, "alice", "", "storage.modify:/ro/open")

	answers := map[string]map[string]string{}
	for _, s := range []struct{ name, host, cgi string }{
		{"xrootd", "127.0.0.1:" + strconv.Itoa(port), ""},
		{"sitebox", b.rootHost, authz},
	} {
		got := map[string]string{}
		answers[s.name] = got
		for _, c := range []struct{ name, path, op string }{
			{"set, not allowed", "/ro/closed/f", "set"},
			{"del, not allowed", "/ro/closed/f", "del"},
			{"set, allowed", "/ro/open/f", "set"},
			{"del, allowed", "/ro/open/f", "del"},
			{"get", "/ro/open/f", "get"},
		} {
			arg := "a=b"
			if c.op != "set" {
				arg = "a"
			}
			out, err := run(t, true, "xrdfs", s.host, "xattr", c.path+s.cgi, c.op, arg)
			got[c.name] = errCode(out, err)
		}
	}
	want := map[string]string{"set, not allowed": "3010", "del, not allowed": "3010", "set, allowed": "3025", "del, allowed": "3025", "get": "3027"}
	for k, w := range want {
		t.Logf("%s: xrootd %s, sitebox %s", k, answers["xrootd"][k], answers["sitebox"][k])
		if x, s := answers["xrootd"][k], answers["sitebox"][k]; x != w || s != x {
			t.Errorf("%s: xrootd %s, sitebox %s; want both %s", k, x, s, w)
		}
	}
}

// writeAttrFiles makes open/f and closed/f below dir.
func writeAttrFiles(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"open", "closed"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, d, "f"), []byte("attributes\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
