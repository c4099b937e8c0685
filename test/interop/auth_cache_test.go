package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/internal/peers"
)

// TestAuthThroughCache: a VO-restricted namespace cached at another site.
// The cache trusts the origin's issuer, enforces the same policy, and
// fills itself with its own token over roots://; a client of another VO
// cannot read the file from the cache even after a CMS user filled it.
func TestAuthThroughCache(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "openssl"} {
		peers.Require(t, tool)
	}
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "cms/data.bin"), 3<<20)
	policy := "[[auth.namespace]]\nprefix = \"/store/cms\"\nread = \"vo\"\nvos = [\"cms\"]\n"
	o := startIssuerNodeVOs(t, "origin", "A", []string{"cms", "atlas"}, "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+policy)

	tokFile := filepath.Join(t.TempDir(), "cache.token")
	os.WriteFile(tokFile, []byte(o.token(t, "cache-C", "/cms", "storage.read:/store")+"\n"), 0o600)
	cacheDir := t.TempDir()
	c := startFedNode(t, "cacheC", "C", "[cache]\ndir = "+strconv.Quote(cacheDir)+
		"\nupstream_ca = "+strconv.Quote(o.certFile)+"\nupstream_token_file = "+strconv.Quote(tokFile)+
		"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"roots://"+o.rootHost+"\"]\n"+
		"[auth]\nca = "+strconv.Quote(o.certFile)+"\n[[auth.issuer]]\nurl = "+strconv.Quote(o.issuer)+"\nvos = [\"cms\", \"atlas\"]\n"+policy)
	ca := certDir(t, o.fedNode, c)
	alice := o.token(t, "alice", "/cms", "storage.read:/store")
	bob := o.token(t, "bob", "/atlas", "storage.read:/store")
	dir := t.TempDir()
	get := func(token string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		args := []string{"-sS", "--cacert", c.certFile, "-o", out, "-w", "%{http_code}"}
		if token != "" {
			args = append(args, "-H", "Authorization: Bearer "+token)
		}
		code, _ := run(t, true, "curl", append(args, c.httpsURL+"/store/cms/data.bin")...)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}

	// The origin itself refuses anonymous readers: the cache can only
	// fill with its own token.
	if out, err := runEnv(t, nil, "xrdcp", "-f", o.rootURL+"//store/cms/data.bin", dir+"/direct"); err == nil {
		t.Fatalf("the origin served cms data anonymously: %s", out)
	}
	if code, _ := get(bob); code != "403" {
		t.Errorf("atlas token before any fill: %s", code)
	}
	code, body := get(alice)
	if code != "200" || body != string(want) {
		t.Fatalf("cms user through the cache: %s (%d bytes)", code, len(body))
	}
	cached, _ := run(t, false, siteboxBin, "cache", "ls", "--state-dir", c.state)
	if !strings.Contains(cached, "/store/cms/data.bin") {
		t.Fatalf("the cache does not hold the file after the fill:\n%s", cached)
	}
	// Now the bytes are on the cache's disk; other VOs still get nothing.
	if code, body := get(bob); code != "403" || !strings.Contains(body, "VO atlas may not read") {
		t.Errorf("atlas token after the fill: %s %q", code, body)
	}
	if code, _ := get(""); code != "401" {
		t.Errorf("no token after the fill: %s", code)
	}
	out, err := runEnv(t, xrdEnv(ca, bob), "xrdcp", "-f", "roots://"+c.rootHost+"//store/cms/data.bin", dir+"/bob")
	if err == nil || !strings.Contains(out, "VO atlas") {
		t.Errorf("xrdcp with an atlas token from the cache: %v: %s", err, out)
	}
	if _, err := os.Stat(dir + "/bob"); err == nil {
		if b, _ := os.ReadFile(dir + "/bob"); len(b) > 0 {
			t.Errorf("a refused xrdcp wrote %d bytes", len(b))
		}
	}
	if out, err := runEnv(t, xrdEnv(ca, alice), "xrdcp", "-f", "roots://"+c.rootHost+"//store/cms/data.bin", dir+"/alice"); err != nil {
		t.Errorf("xrdcp with a cms token from the cache: %s", out)
	}
	sameFile(t, dir+"/alice", want)
	for _, line := range strings.Split(o.proc.Log.String(), "\n") {
		if strings.Contains(line, "subject=cache-C") && strings.Contains(line, "denied") {
			t.Errorf("the origin refused the cache's own token: %s", line)
		}
	}
}
