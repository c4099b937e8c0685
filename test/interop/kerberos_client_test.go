package interop

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// sitebox's own client with nothing but a kinit: `sitebox get` reads a
// protected file from a box that takes Kerberos, over root:// (krb5)
// and https:// (Negotiate), through a director, and from XRootD 5.5
// that takes only krb5; `sitebox put` and `ls` write and list the
// user's area on the box.
// Without the tickets it is refused, and says what the server wanted.
func TestKerberosClientGet(t *testing.T) {
	kdc := startKDC(t, krbRealm)
	keytab := kdc.servicePrincipals(t, "xrootd/localhost", "HTTP/localhost")
	kdc.user(t, "alice", "alice-pw")
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	box, pool := kerberosBox(t, kdc, keytab, "", advertiseTo(region, "500ms"))
	os.WriteFile(filepath.Join(pool, "user", "alice", "note.txt"), []byte("alice's note\n"), 0o644)
	// No token or proxy may stand in for the tickets.
	clean := []string{"BEARER_TOKEN=", "BEARER_TOKEN_FILE=", "XDG_RUNTIME_DIR=" + t.TempDir(), "X509_USER_PROXY="}
	alice := append(kdc.kinit(t, "alice", "alice-pw"), clean...)
	none := append(append([]string{}, kdc.Env...), append(clean, "KRB5CCNAME=FILE:"+filepath.Join(t.TempDir(), "none"))...)
	get := func(env []string, args ...string) (string, string, error) {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "got")
		out, err := runEnv(t, env, siteboxBin, append(append([]string{"get"}, args...), dst)...)
		b, _ := os.ReadFile(dst)
		return string(b), out, err
	}
	authed := func() int {
		return strings.Count(box.proc.Log.String(), "protocol=krb5 issuer=krb5:EXAMPLE.ORG subject=alice")
	}

	t.Run("root", func(t *testing.T) {
		u := "root://localhost:" + strconv.Itoa(portOf(box.rootHost)) + "//store/user/alice/note.txt"
		before := authed()
		if got, out, err := get(alice, u); err != nil || got != "alice's note\n" {
			t.Fatalf("sitebox get with a ccache: %q, %v\n%s", got, err, out)
		}
		if authed() == before {
			t.Errorf("the box did not authenticate alice by krb5:\n%s", box.proc.Log.String())
		}
		if _, out, err := get(none, u); err == nil || !strings.Contains(out, "krb5") {
			t.Errorf("without tickets (%v):\n%s", err, out)
		}
		putLs(t, alice, pool, "root://localhost:"+strconv.Itoa(portOf(box.rootHost))+"//store/user/alice")
	})

	t.Run("https", func(t *testing.T) {
		u := "https://localhost:" + strconv.Itoa(portOf(strings.TrimPrefix(box.httpsURL, "https://"))) + "/store/user/alice/note.txt"
		if got, out, err := get(alice, "--ca", box.certFile, u); err != nil || got != "alice's note\n" {
			t.Fatalf("sitebox get over https with a ccache: %q, %v\n%s", got, err, out)
		}
		if !strings.Contains(box.proc.Log.String(), "component=https protocol=krb5 client=") {
			t.Errorf("the box did not authenticate alice by Negotiate")
		}
		if _, out, err := get(none, "--ca", box.certFile, u); err == nil || !strings.Contains(out, "401") || !strings.Contains(out, "run kinit") {
			t.Errorf("without tickets (%v):\n%s", err, out)
		}
		putLs(t, append(alice, "SITEBOX_CA="+box.certFile), pool, strings.TrimSuffix(u, "/note.txt"))
	})

	// A director with no Kerberos of its own sends the client to the
	// box, where it logs in with its tickets (the director locates files
	// anonymously, so this one is outside the token namespaces).
	t.Run("director", func(t *testing.T) {
		os.MkdirAll(filepath.Join(pool, "pub"), 0o755)
		os.WriteFile(filepath.Join(pool, "pub", "via.txt"), []byte("redirected\n"), 0o644)
		waitFor(t, 15*time.Second, "the box in the director's registry", func() bool {
			out, _ := runEnv(t, nil, siteboxBin, "federation", region.httpsURL, "--ca", region.certFile, "--json")
			return strings.Contains(out, `"krb"`)
		})
		before := authed()
		u := "root://localhost:" + strconv.Itoa(portOf(region.rootHost)) + "//store/pub/via.txt"
		if got, out, err := get(alice, u); err != nil || got != "redirected\n" {
			t.Fatalf("sitebox get through the director: %q, %v\n%s", got, err, out)
		}
		if authed() == before {
			t.Errorf("the redirected client did not authenticate at the box by krb5")
		}
	})

	t.Run("xrootd", func(t *testing.T) {
		port, logFile := krb5Xrootd(t, kdc, keytab, map[string]string{"pub/run.txt": "from xrootd\n"})
		u := "root://localhost:" + strconv.Itoa(port) + "//pub/run.txt"
		if got, out, err := get(alice, u); err != nil || got != "from xrootd\n" {
			t.Fatalf("sitebox get from xrootd with sec.protocol krb5: %q, %v\n%s", got, err, out)
		}
		if b, _ := os.ReadFile(logFile); !strings.Contains(string(b), "login as alice") {
			t.Errorf("xrootd did not log alice's krb5 login:\n%s", b)
		}
		if _, out, err := get(none, u); err == nil || !strings.Contains(out, "krb5") {
			t.Errorf("without tickets (%v):\n%s", err, out)
		}
	})
}

// putLs uploads a file into dir (alice's area, a URL) with the tickets
// of env and lists it there.
func putLs(t *testing.T, env []string, pool, dir string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "up.txt")
	os.WriteFile(src, []byte("uploaded\n"), 0o644)
	name := "up-" + strings.SplitN(dir, ":", 2)[0] + ".txt"
	if out, err := runEnv(t, env, siteboxBin, "put", "-f", src, dir+"/"+name); err != nil {
		t.Fatalf("sitebox put with a ccache: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(pool, "user", "alice", name)); string(b) != "uploaded\n" {
		t.Errorf("the pool holds %q", b)
	}
	if out, err := runEnv(t, env, siteboxBin, "ls", dir); err != nil || !strings.Contains(out, name) {
		t.Errorf("sitebox ls with a ccache (%v):\n%s", err, out)
	}
}

// krb5Xrootd starts XRootD 5.5 taking only krb5, as xrootd/localhost of
// the test realm, serving files; it returns the port and the log file.
func krb5Xrootd(t *testing.T, kdc *testKDC, keytab string, files map[string]string) (int, string) {
	t.Helper()
	peers.Require(t, "xrootd")
	peers.RequireFile(t, "/usr/lib/x86_64-linux-gnu/libXrdSeckrb5-5.so", "XRootD's krb5 plugin (xrootd-server-plugins)")
	work, data := t.TempDir(), t.TempDir()
	for name, body := range files {
		os.MkdirAll(filepath.Join(data, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(data, name), []byte(body), 0o644)
	}
	// xrootd runs as its own user: it gets copies of the keytab and the
	// realm's krb5.conf that it may read (the KDC's directory is private).
	kt, conf := filepath.Join(work, "xrootd.keytab"), filepath.Join(work, "krb5.conf")
	copyFile(t, keytab, kt, 0o600)
	copyFile(t, filepath.Join(kdc.Dir, "krb5.conf"), conf, 0o644)
	port, _ := peers.FreePort()
	name := "interop-krb5-" + strconv.Itoa(port)
	x, err := peers.StartXrootd(context.Background(), peers.XrootdConfig{
		DataDir: data, Port: port, Name: name, WorkDir: work,
		Extra: []string{
			"xrootd.seclib libXrdSec.so",
			"sec.protocol krb5 " + kt + " xrootd/localhost@" + krbRealm,
			"sec.protbind * only krb5",
		},
		Env: []string{"KRB5_CONFIG=" + conf, "KRB5RCACHETYPE=none"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Stop)
	return port, filepath.Join(work, "log", name, "xrootd.log")
}
