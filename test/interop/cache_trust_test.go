package interop

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/server"
	"sitebox/internal/xrootd/xrdtest"
	"sitebox/test/peers"
)

// requestLog is an https listener standing for an internal host: it
// serves secret bytes and records every request it gets.
type requestLog struct {
	mu   sync.Mutex
	reqs []string // "METHOD path auth=..."
}

func (l *requestLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization"))
	l.mu.Unlock()
	if r.Method == "PROPFIND" {
		w.WriteHeader(http.StatusMultiStatus)
		w.Write([]byte(`<?xml version="1.0"?><D:multistatus xmlns:D="DAV:"><D:response><D:href>` + r.URL.Path +
			`</D:href><D:propstat><D:prop><D:getcontentlength>14</D:getcontentlength><D:resourcetype/></D:prop></D:propstat></D:response></D:multistatus>`))
		return
	}
	w.Write([]byte("internal bytes"))
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.reqs...)
}

// TestCacheRefusesUntrustedHTTPSRedirect: a malicious https upstream
// answers every request with 307 to another host:port. The cache neither
// sends that host its token nor fetches from it; clients get an error
// naming the host and the setting. Listed in trusted_redirects, the same
// host is followed.
func TestCacheRefusesUntrustedHTTPSRedirect(t *testing.T) {
	for _, tool := range []string{"xrdcp", "curl"} {
		peers.Require(t, tool)
	}
	var internal requestLog
	b := httptest.NewTLSServer(&internal)
	defer b.Close()
	a := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer a.Close()
	bHost := strings.TrimPrefix(b.URL, "https://")
	tokFile := filepath.Join(t.TempDir(), "cache.token")
	os.WriteFile(tokFile, []byte("secret-cache-token\n"), 0o600)
	conf := func(extra string) string {
		return "[cache]\ndir = " + quote(t.TempDir()) + "\nupstream_insecure = true\nupstream_token_file = " + quote(tokFile) + "\n" + extra +
			"[[cache.route]]\nprefix = \"/store\"\nupstreams = [" + quote(a.URL) + "]\n" +
			"[[auth.namespace]]\nprefix = \"/store\"\nread = \"public\"\n"
	}
	// (A box with namespace rules needs an issuer: it is its own.)
	c := startIssuerNode(t, "cache", "C", conf(""))
	dir := t.TempDir()

	out, _ := run(t, true, "curl", "-sS", "-k", "-w", "\n%{http_code}", c.httpsURL+"/store/f")
	if strings.HasSuffix(out, "200") || !strings.Contains(out, bHost) || !strings.Contains(out, "trusted_redirects") {
		t.Errorf("curl through a cache whose upstream redirects to an untrusted host:\n%s", out)
	}
	out, err := runEnv(t, nil, "xrdcp", "-f", c.rootURL+"//store/f", dir+"/f")
	if err == nil || !strings.Contains(out, bHost) || !strings.Contains(out, "trusted_redirects") {
		t.Errorf("xrdcp through a cache whose upstream redirects to an untrusted host: %v: %s", err, out)
	}
	t.Logf("xrdcp: %s", out)
	if got := internal.all(); len(got) != 0 {
		t.Fatalf("the untrusted host was contacted by the cache: %q", got)
	}
	if log := c.proc.Log.String(); !strings.Contains(log, "upstream redirect refused") || !strings.Contains(log, bHost) {
		t.Errorf("the cache did not log the refused redirect")
	}

	// Trusted, the redirect is followed and the host gets the token.
	trusting := startIssuerNode(t, "trusting", "C", conf("trusted_redirects = ["+quote(bHost)+"]\n"))
	out, _ = run(t, true, "curl", "-sS", "-k", trusting.httpsURL+"/store/f")
	if out != "internal bytes" {
		t.Errorf("curl through a cache trusting the redirect: %q", out)
	}
	if got := internal.all(); len(got) == 0 || !strings.HasSuffix(got[0], "auth=Bearer secret-cache-token") {
		t.Errorf("the trusted host did not get the cache's token: %q", got)
	}
}

// TestCacheRefusesUntrustedRootRedirect: a root:// upstream redirects
// every request to another host:port; the cache never connects there.
func TestCacheRefusesUntrustedRootRedirect(t *testing.T) {
	peers.Require(t, "xrdcp")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	internalHost := ln.Addr().String()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{t.TempDir()}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	up := &xrdtest.RouteStore{Store: o, Decide: xrdtest.RedirectAll([]store.Endpoint{{Root: internalHost}}, "")}
	uln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{}, up, nil)
	go srv.Serve(uln)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	upURL := (&url.URL{Scheme: "root", Host: uln.Addr().String()}).String()
	c := startFedNode(t, "cache", "C", "[cache]\ndir = "+quote(t.TempDir())+
		"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = ["+quote(upURL)+"]\n")

	out, err := runEnv(t, nil, "xrdcp", "-f", c.rootURL+"//store/f", t.TempDir()+"/f")
	if err == nil || !strings.Contains(out, internalHost) || !strings.Contains(out, "trusted_redirects") {
		t.Errorf("xrdcp through a cache whose root:// upstream redirects to an untrusted host: %v: %s", err, out)
	}
	out, _ = run(t, true, "curl", "-sS", "-k", "-w", "\n%{http_code}", c.httpsURL+"/store/f")
	if strings.HasSuffix(out, "200") || !strings.Contains(out, internalHost) {
		t.Errorf("curl through a cache whose root:// upstream redirects to an untrusted host:\n%s", out)
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("the cache connected to the untrusted host %d times", n)
	}
}
