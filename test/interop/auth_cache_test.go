package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sitebox/test/peers"
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

// TestCacheKeepsOriginRules: a cache filling with its own token never
// serves what the origin protects to a client the origin would refuse.
// Without a rule for the path at the cache, every client is refused over
// root://, roots:// and https://, with the missing rule named, and the
// origin is never asked; with the origin's rule, token holders are served
// and others refused.
func TestCacheKeepsOriginRules(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl", "openssl"} {
		peers.Require(t, tool)
	}
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "prot/data.bin"), 1<<20)
	rule := "[[auth.namespace]]\nprefix = \"/store/prot\"\nread = \"token\"\n"
	o := startIssuerNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+rule)
	tokFile := filepath.Join(t.TempDir(), "cache.token")
	os.WriteFile(tokFile, []byte(o.token(t, "cache-C", "", "storage.read:/store")+"\n"), 0o600)
	cacheConf := func(policy string) string {
		return "[cache]\ndir = " + strconv.Quote(t.TempDir()) +
			"\nupstream_ca = " + strconv.Quote(o.certFile) + "\nupstream_token_file = " + strconv.Quote(tokFile) +
			"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"roots://" + o.rootHost + "\"]\n" +
			"[auth]\nca = " + strconv.Quote(o.certFile) + "\n[[auth.issuer]]\nurl = " + strconv.Quote(o.issuer) + "\n" + policy
	}
	alice := o.token(t, "alice", "", "storage.read:/store")
	dir := t.TempDir()
	curl := func(c *fedNode, token string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		args := []string{"-sS", "--cacert", c.certFile, "-o", out, "-w", "%{http_code}"}
		if token != "" {
			args = append(args, "-H", "Authorization: Bearer "+token)
		}
		code, _ := run(t, true, "curl", append(args, c.httpsURL+"/store/prot/data.bin")...)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}
	xrdcp := func(c *fedNode, ca, scheme, token, dst string) (string, error) {
		return runEnv(t, xrdEnv(ca, token), "xrdcp", "-f", scheme+"://"+c.rootHost+"//store/prot/data.bin", dst)
	}

	// No rule at the cache for /store/prot.
	bare := startFedNode(t, "cacheBare", "C", cacheConf(""))
	ca := certDir(t, o.fedNode, bare)
	const reason = "no [[auth.namespace]] rule covers /store/prot/data.bin"
	for _, scheme := range []string{"root", "roots"} {
		out, err := xrdcp(bare, ca, scheme, "", dir+"/anon-"+scheme)
		if err == nil || !strings.Contains(out, reason) {
			t.Errorf("anonymous xrdcp %s:// through a cache without a rule: %v: %s", scheme, err, out)
		}
	}
	// (401: a refusal of a client without a token invites one.)
	if code, body := curl(bare, ""); (code != "401" && code != "403") || !strings.Contains(body, reason) {
		t.Errorf("anonymous curl through a cache without a rule: %s %q", code, body)
	}
	// The rule is missing for token holders too: the cache cannot know
	// what the origin would allow them.
	if code, body := curl(bare, alice); code != "403" || !strings.Contains(body, reason) {
		t.Errorf("token holder through a cache without a rule: %s %q", code, body)
	}
	if !strings.Contains(bare.proc.Log.String(), "access denied") || !strings.Contains(bare.proc.Log.String(), "no [[auth.namespace]] rule covers") {
		t.Errorf("the cache did not log the refusal with its reason")
	}
	if strings.Contains(o.proc.Log.String(), "sub=cache-C") {
		t.Errorf("the cache fetched an unruled path from the origin with its token")
	}
	if out, _ := run(t, true, siteboxBin, "config", "check", filepath.Join(bare.state, "sitebox.toml")); !strings.Contains(out, "warning: ") ||
		!strings.Contains(out, "no [[auth.namespace]] rule covers it") {
		t.Errorf("config check does not warn about the unruled cached prefix:\n%s", out)
	}

	// With the origin's rule the cache serves token holders only.
	ruled := startFedNode(t, "cacheRuled", "C", cacheConf(rule))
	ca = certDir(t, o.fedNode, ruled)
	if code, _ := curl(ruled, ""); code != "401" {
		t.Errorf("anonymous curl through a cache with the rule: %s", code)
	}
	for _, scheme := range []string{"root", "roots"} {
		out, err := xrdcp(ruled, ca, scheme, "", dir+"/anon2-"+scheme)
		if err == nil || !strings.Contains(out, "requires a bearer token") {
			t.Errorf("anonymous xrdcp %s:// through a cache with the rule: %v: %s", scheme, err, out)
		}
	}
	if code, body := curl(ruled, alice); code != "200" || body != string(want) {
		t.Fatalf("token holder through a cache with the rule: %s (%d bytes)", code, len(body))
	}
	if out, err := xrdcp(ruled, ca, "roots", alice, dir+"/alice"); err != nil {
		t.Fatalf("xrdcp roots:// with a token through a cache with the rule: %s", out)
	}
	sameFile(t, dir+"/alice", want)
}
