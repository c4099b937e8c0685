package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/test/peers"
)

const krbRealm = "EXAMPLE.ORG"

// kerberosBox starts a box from packaging/config/kerberos.toml with the
// test's keytab, host (localhost) and pool, and jobs, answering as
// xrootd/localhost and HTTP/localhost of the test realm; realms replaces
// the sample's realm name when set (a box that maps another realm).
func kerberosBox(t *testing.T, kdc *testKDC, keytab, realm, extra string) (*fedNode, string) {
	t.Helper()
	return kerberosBoxEdit(t, keytab, realm, extra, nil)
}

// kerberosBoxEdit is kerberosBox with edit applied to the sample's text
// (the realm's scopes changed, say).
func kerberosBoxEdit(t *testing.T, keytab, realm, extra string, edit func(string) string) (*fedNode, string) {
	t.Helper()
	sample, err := os.ReadFile("../../packaging/config/kerberos.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(sample)
	s = s[strings.Index(s, "[[export]]"):] // the test writes its own [server], [root], [https]
	pool := t.TempDir()
	for _, d := range []string{"user/alice", "user/bob", "data"} {
		os.MkdirAll(filepath.Join(pool, d), 0o755)
	}
	os.WriteFile(filepath.Join(pool, "data", "run1.root"), []byte("cms data\n"), 0o644)
	os.WriteFile(filepath.Join(pool, "user", "bob", "secret.txt"), []byte("bob's\n"), 0o644)
	os.Chmod(pool, 0o750) // a t.TempDir is 0755 below a private parent, which jobs open
	s = strings.NewReplacer("/etc/sitebox/krb5.keytab", keytab, "t3.example.org", "localhost", "/data/pool1", pool).Replace(s)
	if realm != "" {
		s = strings.Replace(s, "name = \""+krbRealm+"\"", "name = \""+realm+"\"", 1)
	}
	if edit != nil {
		s = edit(s)
	}
	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	return spec.start(t, "krb", "T3", s+extra), pool
}

// Campus users reach the box with their kinit: xrdcp/xrdfs with the krb5
// security protocol read and write where the realm's scopes allow and are
// refused elsewhere, curl --negotiate reads, jobs are owned by the
// principal; wrong, expired and unmapped tickets are refused with the
// reason, in the reply and the log.
func TestKerberos(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "xrdfs")
	peers.Require(t, "curl")
	peers.RequireFile(t, "/usr/lib/x86_64-linux-gnu/libXrdSeckrb5-5.so", "XRootD's krb5 client plugin (libxrootd-client)")
	kdc := startKDC(t, krbRealm)
	keytab := kdc.servicePrincipals(t, "xrootd/localhost", "HTTP/localhost")
	kdc.user(t, "alice", "alice-pw")
	jconf, _ := jobsConfDir(t, []string{"sbxslot8"}, "")
	// A director with no Kerberos of its own: clients it redirects
	// authenticate at the box they are sent to.
	region := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	box, pool := kerberosBox(t, kdc, keytab, "", jconf+advertiseTo(region, "500ms"))
	alice := append(kdc.kinit(t, "alice", "alice-pw"), "XrdSecPROTOCOL=krb5")
	root := "root://localhost:" + strconv.Itoa(portOf(box.rootHost))

	t.Run("xrdcp", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "up.txt")
		os.WriteFile(src, []byte("alice was here\n"), 0o644)
		if out, err := runEnv(t, alice, "xrdcp", "-f", src, root+"//store/user/alice/up.txt"); err != nil {
			t.Fatalf("alice writes her area: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(filepath.Join(pool, "user", "alice", "up.txt")); string(b) != "alice was here\n" {
			t.Errorf("the pool holds %q", b)
		}
		dst := filepath.Join(t.TempDir(), "run1.root")
		if out, err := runEnv(t, alice, "xrdcp", root+"//store/data/run1.root", dst); err != nil {
			t.Errorf("alice (realm group /cms) reads the cms data: %v\n%s", err, out)
		}
		out, err := runEnv(t, alice, "xrdcp", "-f", src, root+"//store/user/bob/mine.txt")
		if err == nil || !strings.Contains(out, "no storage.create scope for /store/user/bob/mine.txt") {
			t.Errorf("alice wrote bob's area (%v):\n%s", err, out)
		}
		if out, err := runEnv(t, alice, "xrdcp", "-f", src, root+"//store/data/new.root"); err == nil || !strings.Contains(out, "read-only") {
			t.Errorf("alice wrote the read-only data (%v):\n%s", err, out)
		}
		if out, err := runEnv(t, alice, "xrdfs", "localhost:"+strconv.Itoa(portOf(box.rootHost)), "ls", "/store/user/alice"); err != nil || !strings.Contains(out, "up.txt") {
			t.Errorf("xrdfs ls (%v):\n%s", err, out)
		}
		log := box.proc.Log.String()
		for _, want := range []string{"protocol=krb5 issuer=krb5:EXAMPLE.ORG subject=alice", "op=create path=/store/user/bob/mine.txt subject=alice issuer=krb5:EXAMPLE.ORG"} {
			if !strings.Contains(log, want) {
				t.Errorf("the log lacks %q", want)
			}
		}
	})

	// The director locates files anonymously, so this one lies outside
	// the token namespaces; what counts is that the client, redirected,
	// authenticates at the box with its ticket.
	t.Run("director", func(t *testing.T) {
		os.MkdirAll(filepath.Join(pool, "pub"), 0o755)
		os.WriteFile(filepath.Join(pool, "pub", "via.txt"), []byte("redirected\n"), 0o644)
		waitFor(t, 15*time.Second, "the box in the director's registry", func() bool {
			out, _ := runEnv(t, nil, siteboxBin, "federation", region.httpsURL, "--ca", region.certFile, "--json")
			return strings.Contains(out, `"krb"`)
		})
		authed := func() int {
			return strings.Count(box.proc.Log.String(), "protocol=krb5 issuer=krb5:EXAMPLE.ORG subject=alice")
		}
		before := authed()
		dst := filepath.Join(t.TempDir(), "via.txt")
		dir := "root://localhost:" + strconv.Itoa(portOf(region.rootHost))
		if out, err := runEnv(t, alice, "xrdcp", "-f", dir+"//store/pub/via.txt", dst); err != nil {
			t.Fatalf("alice reads through the director: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(dst); string(b) != "redirected\n" {
			t.Errorf("read %q through the director", b)
		}
		if authed() == before {
			t.Errorf("the redirected client did not authenticate at the box with krb5")
		}
	})

	// A cache at the site takes the same tickets and applies the same
	// policy; it fills itself with its own token from the box's issuer.
	t.Run("cache", func(t *testing.T) {
		os.WriteFile(filepath.Join(pool, "user", "alice", "cached.txt"), []byte("through the cache\n"), 0o644)
		tok, err := runEnv(t, nil, siteboxBin, "token", "issue", "--config", filepath.Join(box.state, "sitebox.toml"),
			"--sub", "cache", "--scope", "storage.read:/store", "--lifetime", "1h")
		if err != nil {
			t.Fatalf("token issue: %v: %s", err, tok)
		}
		tokFile := filepath.Join(t.TempDir(), "cache.token")
		os.WriteFile(tokFile, []byte(strings.TrimSpace(tok)+"\n"), 0o600)
		sample, _ := os.ReadFile("../../packaging/config/kerberos.toml")
		krb := string(sample[strings.Index(string(sample), "[auth.kerberos]"):])
		krb = strings.NewReplacer("/etc/sitebox/krb5.keytab", keytab, "t3.example.org", "localhost").Replace(krb)
		c := startFedNode(t, "cacheK", "T3", "[cache]\ndir = "+strconv.Quote(t.TempDir())+
			"\nupstream_ca = "+strconv.Quote(box.certFile)+"\nupstream_token_file = "+strconv.Quote(tokFile)+
			"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"roots://"+box.rootHost+"\"]\n"+krb)
		cu := "root://localhost:" + strconv.Itoa(portOf(c.rootHost)) + "//store/user/alice/cached.txt"
		dst := filepath.Join(t.TempDir(), "cached.txt")
		if out, err := runEnv(t, alice, "xrdcp", "-f", cu, dst); err != nil {
			t.Fatalf("alice reads through the cache: %v\n%s", err, out)
		}
		if b, _ := os.ReadFile(dst); string(b) != "through the cache\n" {
			t.Errorf("read %q through the cache", b)
		}
		out, err := runEnv(t, []string{"XrdSecPROTOCOL=unix"}, "xrdcp", "-f", cu, filepath.Join(t.TempDir(), "anon"))
		if err == nil || !strings.Contains(out, "requires a bearer token") {
			t.Errorf("an anonymous client read alice's cached file (%v):\n%s", err, out)
		}
		if !strings.Contains(c.proc.Log.String(), "protocol=krb5 issuer=krb5:EXAMPLE.ORG subject=alice") {
			t.Errorf("the cache did not authenticate alice by krb5")
		}
	})

	t.Run("roots", func(t *testing.T) {
		ca := certDir(t, box)
		env := append(append([]string{}, alice...), xrdEnv(ca, "")...)
		src := filepath.Join(t.TempDir(), "tls.txt")
		os.WriteFile(src, []byte("over TLS\n"), 0o644)
		roots := "roots://localhost:" + strconv.Itoa(portOf(box.rootHost))
		if out, err := runEnv(t, env, "xrdcp", "-f", src, roots+"//store/user/alice/tls.txt"); err != nil {
			t.Fatalf("alice writes over roots://: %v\n%s", err, out)
		}
		if out, err := runEnv(t, env, "xrdcp", "-f", roots+"//store/user/alice/tls.txt", filepath.Join(t.TempDir(), "back")); err != nil {
			t.Errorf("alice reads over roots://: %v\n%s", err, out)
		}
	})

	hp := portOf(strings.TrimPrefix(box.httpsURL, "https://"))
	https := "https://localhost:" + strconv.Itoa(hp)
	curl := func(env []string, args ...string) string {
		t.Helper()
		base := []string{"-s", "--cacert", box.certFile, "--resolve", "localhost:" + strconv.Itoa(hp) + ":127.0.0.1"}
		out, _ := runEnv(t, env, "curl", append(base, args...)...)
		return out
	}

	t.Run("curl", func(t *testing.T) {
		os.WriteFile(filepath.Join(pool, "user", "alice", "note.txt"), []byte("read over SPNEGO\n"), 0o644)
		if out := curl(alice, "--negotiate", "-u", ":", https+"/store/user/alice/note.txt"); out != "read over SPNEGO\n" {
			t.Errorf("curl --negotiate read %q", out)
		}
		head := strings.ToLower(curl(nil, "-D", "-", "-o", "/dev/null", https+"/store/user/alice/note.txt"))
		if !strings.Contains(head, " 401") || !strings.Contains(head, "www-authenticate: negotiate") || !strings.Contains(head, "www-authenticate: bearer") {
			t.Errorf("anonymous request: want 401 with Negotiate and Bearer challenges:\n%s", head)
		}
		if out := curl(alice, "--negotiate", "-u", ":", "-w", " %{http_code}", "-T", "-", https+"/store/user/bob/up.txt"); !strings.HasSuffix(out, " 403") || !strings.Contains(out, "no storage.create scope") {
			t.Errorf("alice wrote bob's area over https: %s", out)
		}
	})

	t.Run("jobs", func(t *testing.T) {
		body := `{"specs":[{"executable":"/bin/echo","arguments":["hello"],"domains":["local"]}]}`
		out := curl(alice, "--negotiate", "-u", ":", "-H", "Content-Type: application/json", "--data", body, https+jobsapi.Prefix)
		var sub struct{ Jobs []jobs.Job }
		if err := json.Unmarshal([]byte(out), &sub); err != nil || len(sub.Jobs) != 1 {
			t.Fatalf("submit with a Kerberos identity: %v: %s", err, out)
		}
		j := sub.Jobs[0]
		if j.Owner != "alice" || j.Issuer != "krb5:"+krbRealm || j.Grid || j.VO != "cms" {
			t.Errorf("job %s: owner %q issuer %q grid %v vo %q; want alice, krb5:%s, local, cms", j.ID, j.Owner, j.Issuer, j.Grid, j.VO, krbRealm)
		}
		got := curl(alice, "--negotiate", "-u", ":", https+jobsapi.Prefix+"/"+j.ID)
		if !strings.Contains(got, `"owner":"alice"`) {
			t.Errorf("alice does not see her job: %s", got)
		}
		if anon := strings.ToLower(curl(nil, "-D", "-", https+jobsapi.Prefix)); !strings.Contains(anon, " 401") || !strings.Contains(anon, "www-authenticate: negotiate") {
			t.Errorf("anonymous job list: want 401 with a Negotiate challenge:\n%s", anon)
		}
		if out := curl(nil, "-H", "Authorization: Negotiate Zm9v", https+jobsapi.Prefix); !strings.Contains(out, "kerberos ticket refused") {
			t.Errorf("a bad Negotiate token on the job API: %s", out)
		}
	})

	t.Run("expired", func(t *testing.T) {
		// MIT's client library never sends an expired ticket: XrdSeckrb5
		// refuses before the box sees it, and says why in its debug output.
		short := append(kdc.kinit(t, "alice", "alice-pw", "-l", "3s"), "XrdSecPROTOCOL=krb5", "XrdSecDEBUG=1")
		time.Sleep(4 * time.Second) // the ticket's whole life: nothing to wait on but the clock
		out, err := runEnv(t, short, "xrdcp", "-f", root+"//store/user/alice/up.txt", filepath.Join(t.TempDir(), "x"))
		if err == nil || !strings.Contains(strings.ToLower(out), "expired") {
			t.Errorf("an expired ticket read (%v):\n%s", err, out)
		}
	})

	t.Run("unmapped realm", func(t *testing.T) {
		other, _ := kerberosBox(t, kdc, keytab, "OTHER.ORG", "")
		u := "root://localhost:" + strconv.Itoa(portOf(other.rootHost))
		env := append(append([]string{}, alice[:len(alice)-1]...), "XrdSecPROTOCOL=krb5,unix")
		out, err := runEnv(t, env, "xrdcp", "-f", u+"//store/user/alice/up.txt", filepath.Join(t.TempDir(), "x"))
		const why = "realm EXAMPLE.ORG is not mapped on this box"
		if err == nil || !strings.Contains(out, why) {
			t.Errorf("a principal of an unmapped realm read (%v):\n%s", err, out)
		}
		if !strings.Contains(other.proc.Log.String(), why) {
			t.Errorf("the box did not log why")
		}
	})

	// Last: the box's keytab goes stale when the service key changes.
	t.Run("wrong key", func(t *testing.T) {
		kdc.kadmin(t, "cpw -randkey xrootd/localhost")
		env := append(kdc.kinit(t, "alice", "alice-pw"), "XrdSecPROTOCOL=krb5,unix")
		out, err := runEnv(t, env, "xrdcp", "-f", root+"//store/user/alice/up.txt", filepath.Join(t.TempDir(), "x"))
		if err == nil || !strings.Contains(out, "kerberos authentication refused") || !strings.Contains(out, "KRB_AP_ERR_NOKEY") {
			t.Errorf("a ticket the keytab cannot decrypt read (%v):\n%s", err, out)
		}
		if log := box.proc.Log.String(); !strings.Contains(log, `msg="authentication failed"`) || !strings.Contains(log, "protocol=krb5 reason=\"kerberos authentication refused") {
			t.Errorf("the box did not log the refusal")
		}
	})
}

// portOf is the port of a host:port.
func portOf(hostport string) int {
	_, p, _ := strings.Cut(hostport, ":")
	n, _ := strconv.Atoi(p)
	return n
}
