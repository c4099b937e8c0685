package interop

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/x509grid/x509test"
	"sitebox/test/peers"
)

// TestCacheFillsWithRobotProxyFromGSIXrootd: a sitebox cache in front
// of an xrootd 5.5 that accepts only gsi (libXrdVoms, an authorization
// database letting VO testvo read /store/vo and any authenticated user
// /store/pub) fills with its robot proxy ([cache] upstream_proxy_file)
// and serves its users by its own rules: /store/pub to anyone,
// /store/vo to a token of VO testvo only. Replacing the proxy file
// changes the next fill's credential without a restart: a plain proxy
// of another DN fills public files but is refused the VO's by xrootd,
// an expired one fills nothing, and the robot's again fills all.
func TestCacheFillsWithRobotProxyFromGSIXrootd(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")
	p := gridPKI.Get(t)
	x := startGSIXrootd(t, p, "rl")
	for _, f := range []string{"store/vo/g.txt", "store/vo/h.txt", "store/pub/q.txt", "store/pub/r.txt"} {
		if err := os.WriteFile(filepath.Join(x.data, f), []byte("data of "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Bob is the robot; alice the other DN.
	b := p.Scratch(t)
	robotProxy := p.VOMSProxyOf(b, p.Bob, nil).Chain
	otherProxy := b.GlobusProxy(p.Alice, p.CADir, "-rfc").Chain
	expiredProxy := p.VOMSProxyOf(b, p.Bob, nil, "-hours", "1", "-pastproxy", "3:00", "-pastac", "3:00", "-vomslife", "1").Chain
	b.OK(t)
	proxyFile := filepath.Join(t.TempDir(), "robot-proxy.pem")
	install := func(src string) {
		t.Helper()
		tmp := proxyFile + ".new"
		copyFile(t, src, tmp, 0o600)
		if err := os.Rename(tmp, proxyFile); err != nil {
			t.Fatal(err)
		}
	}
	install(robotProxy)

	conf := "[cache]\ndir = " + strconv.Quote(t.TempDir()) + "\nupstream_proxy_file = " + strconv.Quote(proxyFile) +
		"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://127.0.0.1:" + strconv.Itoa(x.port) + "\"]\n" +
		"[[auth.namespace]]\nprefix = \"/store/vo\"\nread = \"vo\"\nvos = [\"" + x509test.TestVO + "\"]\n" +
		"[[auth.namespace]]\nprefix = \"/store/pub\"\nread = \"public\"\n" +
		"[auth.x509]\ncert_dir = " + strconv.Quote(p.CADir) + "\nvoms_dir = " + strconv.Quote(p.VOMSDir) + "\n"
	c := startIssuerNodeVOs(t, "gsicache", "T3", []string{x509test.TestVO}, conf)
	member := c.token(t, "alice", "/"+x509test.TestVO, "storage.read:/store")
	stranger := c.token(t, "mallory", "/elsewhere", "storage.read:/store")

	curl := func(path, token string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		args := []string{"-sS", "--cacert", c.certFile, "-o", out, "-w", "%{http_code}"}
		if token != "" {
			args = append(args, "-H", "Authorization: Bearer "+token)
		}
		code, _ := run(t, true, "curl", append(args, c.httpsURL+path)...)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}
	xrdcp := func(path string) (string, error) {
		return runEnv(t, []string{"X509_USER_PROXY=/nonexistent"}, "xrdcp", "-f", c.rootURL+"/"+path, "-")
	}
	fills := func() int { return strings.Count(c.proc.Log.String(), "X.509 proxy loaded") }

	// The robot's proxy: public and VO files fill; the cache's rules
	// decide who gets them.
	if out, err := xrdcp("/store/pub/p.txt"); err != nil || !strings.Contains(out, "public data") {
		t.Fatalf("anonymous xrdcp of a public file through the cache: %v\n%s", err, out)
	}
	if code, body := curl("/store/vo/f.txt", member); code != "200" || body != "vo data\n" {
		t.Fatalf("a testvo token through the cache: %s %q", code, body)
	}
	if code, _ := curl("/store/vo/f.txt", stranger); code != "403" {
		t.Errorf("a token of another VO got the cached VO file: %s", code)
	}
	if code, _ := curl("/store/vo/f.txt", ""); code != "401" && code != "403" {
		t.Errorf("no token got the cached VO file: %s", code)
	}
	if out, err := xrdcp("/store/vo/f.txt"); err == nil || strings.Contains(out, "vo data") {
		t.Errorf("anonymous xrdcp got the VO file: %s", out)
	}
	if n := fills(); n != 1 {
		t.Errorf("the robot proxy was loaded %d times, want once", n)
	}

	// Another DN, without VO: xrootd's authorization database refuses
	// it the VO's files; public ones still fill.
	robotLog := settledLog(t, x.log)
	time.Sleep(10 * time.Millisecond) // a new modification time
	install(otherProxy)
	if code, body := curl("/store/vo/g.txt", member); code == "200" {
		t.Errorf("a fill with the other DN's plain proxy got a VO file: %q", body)
	}
	if code, body := curl("/store/pub/q.txt", ""); code != "200" || !strings.Contains(body, "q.txt") {
		t.Errorf("a public fill with the other DN's proxy: %s %q", code, body)
	}
	// xrootd names a gsi user by the hash of its DN (-gmapopt:nomap):
	// the logins after the replacement are another user's.
	if before, after := xrootdLogins(robotLog), xrootdLogins(mustRead(t, x.log)[len(robotLog):]); len(before) != 1 || len(after) != 1 || after[0] == before[0] {
		t.Errorf("xrootd's logins: %q with the robot's proxy, %q after replacing it, want one user each, not the same", before, after)
	}

	// Expired: the cache presents nothing and says why.
	time.Sleep(10 * time.Millisecond)
	install(expiredProxy)
	if code, body := curl("/store/pub/r.txt", ""); code == "200" {
		t.Errorf("a fill with an expired proxy: %q", body)
	}
	if !strings.Contains(c.proc.Log.String(), "expired") {
		t.Errorf("the cache's log does not say the proxy expired")
	}

	// The robot's again: picked up without a restart.
	time.Sleep(10 * time.Millisecond)
	install(robotProxy)
	if code, body := curl("/store/vo/h.txt", member); code != "200" || !strings.Contains(body, "h.txt") {
		t.Errorf("after the robot's proxy came back: %s %q", code, body)
	}
	if code, body := curl("/store/pub/r.txt", ""); code != "200" || !strings.Contains(body, "r.txt") {
		t.Errorf("after the robot's proxy came back, the public file: %s %q", code, body)
	}
}

// settledLog is the log file once it stopped growing (at most a few
// seconds): the logins of the fills before are all in it, none half
// written, so what follows is the next fills' alone.
func settledLog(t *testing.T, path string) string {
	t.Helper()
	prev := mustRead(t, path)
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		cur := mustRead(t, path)
		if cur == prev && strings.HasSuffix(cur, "\n") {
			break
		}
		prev = cur
	}
	return prev
}

// xrootdLogins are the distinct user names of xrootd's "login as"
// lines in log.
func xrootdLogins(log string) []string {
	var names []string
	for _, line := range strings.Split(log, "\n") {
		_, name, ok := strings.Cut(line, " login as ")
		if name = strings.TrimSpace(name); ok && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// TestCacheFillsWithRobotProxyFromXrdHTTP: a cache in front of XrdHttp
// 5.5 with the VOMS extractor (only VO testvo may read /vo) presents its
// robot proxy as the TLS client certificate; replacing the proxy file by
// a plain one (no VO) makes the next fill refused by XrdHttp, and the
// VOMS proxy again fills.
func TestCacheFillsWithRobotProxyFromXrdHTTP(t *testing.T) {
	peers.Require(t, "curl")
	c := makeGridCreds(t)
	x := startXrdHTTPVOMS(t, c)
	for _, f := range []string{"vo/g", "vo/h"} {
		writeRandom(t, filepath.Join(x.data, f), 1024)
	}
	proxyFile := filepath.Join(t.TempDir(), "robot-proxy.pem")
	install := func(src string) {
		t.Helper()
		copyFile(t, src, proxyFile+".new", 0o600)
		if err := os.Rename(proxyFile+".new", proxyFile); err != nil {
			t.Fatal(err)
		}
	}
	install(c.voms)
	port := x.url[strings.LastIndex(x.url, ":")+1:]
	conf := "[cache]\ndir = " + strconv.Quote(t.TempDir()) + "\nupstream_proxy_file = " + strconv.Quote(proxyFile) +
		"\n[[cache.route]]\nprefix = \"/vo\"\nupstreams = [\"https://localhost:" + port + "/vo\"]\n" +
		"[[auth.namespace]]\nprefix = \"/vo\"\nread = \"public\"\n" +
		"[auth.x509]\ncert_dir = " + strconv.Quote(c.pki.CADir) + "\nvoms_dir = " + strconv.Quote(c.pki.VOMSDir) + "\n"
	b := startIssuerNode(t, "httpscache", "T3", conf)
	get := func(path string) (string, string) {
		out := filepath.Join(t.TempDir(), "body")
		code, _ := run(t, true, "curl", "-sS", "-o", out, "-w", "%{http_code}", "--cacert", b.certFile, b.httpsURL+path)
		body, _ := os.ReadFile(out)
		return code, string(body)
	}
	if code, _ := get("/vo/f"); code != "200" {
		t.Fatalf("a fill with the robot's VOMS proxy: %s", code)
	}
	time.Sleep(10 * time.Millisecond)
	install(c.plain)
	// The cache passes XrdHttp's refusal on (as 401 to a client with no
	// credential of its own).
	if code, body := get("/vo/g"); code == "200" || !strings.Contains(body, "HTTP 403") {
		t.Errorf("a fill with a plain proxy: %s %q, want XrdHttp's refusal (403)", code, body)
	}
	time.Sleep(10 * time.Millisecond)
	install(c.voms)
	if code, _ := get("/vo/g"); code != "200" {
		t.Errorf("after the VOMS proxy came back: %s", code)
	}
}
