package webdav

import (
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
)

// routingStore is a tiny director: the directory /dir lists one file, and
// every other path is routed by route (a redirect or a wait). It records
// the request each call saw in its context.
type routingStore struct {
	route store.Route
	mu    sync.Mutex
	seen  []*store.Request
}

func (s *routingStore) note(ctx context.Context) {
	s.mu.Lock()
	s.seen = append(s.seen, store.RequestFrom(ctx))
	s.mu.Unlock()
}

func (s *routingStore) last() *store.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return nil
	}
	return s.seen[len(s.seen)-1]
}

func (s *routingStore) Route(ctx context.Context, c store.Call) (store.Route, error) {
	s.note(ctx)
	if c.Op == "stat" && (c.Path == "/dir" || c.Path == "/") {
		return store.Route{}, nil
	}
	return s.route, nil
}
func (s *routingStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	s.note(ctx)
	if name == "/dir" || name == "/" {
		return store.FileInfo{Name: "dir", Mode: fs.ModeDir | 0o555}, nil
	}
	return store.FileInfo{}, store.ErrUnsupported
}
func (s *routingStore) Open(ctx context.Context, name string) (store.File, error) {
	s.note(ctx)
	if name == "/dir" || name == "/" {
		return nil, store.ErrIsDir
	}
	return nil, store.ErrUnsupported
}
func (s *routingStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	s.note(ctx)
	return []store.FileInfo{{Name: "merged.root", Size: 42, Mode: 0o444}}, nil
}

func newRoutingServer(t *testing.T, rt store.Route) (*httptest.Server, *routingStore) {
	t.Helper()
	st := &routingStore{route: rt}
	srv := httptest.NewServer(New(Config{}, st, nil))
	t.Cleanup(srv.Close)
	return srv, st
}

// noFollow is a client that shows redirects instead of following them.
var noFollow = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func send(t *testing.T, method, url, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestRedirectEveryMethod(t *testing.T) {
	re := store.Route{Opaque: "sbx.hops=2&vo=cms", Reason: "replica at site B",
		To: []store.Endpoint{
			{Root: "b.example.org:1094"}, // root:// only: not in Location or Link
			{Root: "c.example.org:1094", HTTPS: "https://c.example.org:8443/"},
			{HTTPS: "https://d.example.org:8443"},
			{HTTPS: "ftp://bad.example.org"}, // not http(s): skipped
		}}
	srv, st := newRoutingServer(t, re)
	path := "/store/a b/%C3%A9t%C3%A9#1.root"
	escaped := "/store/a%20b/%C3%A9t%C3%A9%231.root"
	wantLoc := "https://c.example.org:8443" + escaped + "?authz=tok%2Bx&tried=a&sbx.hops=2&vo=cms"
	wantLink := "<" + wantLoc + ">; rel=duplicate; pri=1, <https://d.example.org:8443" + escaped +
		"?authz=tok%2Bx&tried=a&sbx.hops=2&vo=cms>; rel=duplicate; pri=2"
	for _, c := range []struct {
		method, body string
		hdr          []string
	}{
		{"GET", "", nil},
		{"GET", "", []string{"Range", "bytes=0-9"}},
		{"HEAD", "", []string{"Want-Digest", "adler32"}},
		{"PROPFIND", "", []string{"Depth", "0"}},
		{"PROPFIND", "", []string{"Depth", "1"}},
		{"PUT", strings.Repeat("x", 1000), nil},
		{"PUT", "y", []string{"If-None-Match", "*"}},
	} {
		u := srv.URL + escaped + "?authz=tok%2Bx&vo=atlas&tried=a"
		resp := send(t, c.method, u, c.body, c.hdr...)
		if resp.StatusCode != http.StatusTemporaryRedirect {
			t.Fatalf("%s %s: status %d, want 307", c.method, path, resp.StatusCode)
		}
		if got := resp.Header.Get("Location"); got != wantLoc {
			t.Errorf("%s Location\n got %s\nwant %s", c.method, got, wantLoc)
		}
		if got := resp.Header.Get("Link"); got != wantLink {
			t.Errorf("%s Link\n got %s\nwant %s", c.method, got, wantLink)
		}
		for _, h := range []string{"Etag", "Digest", "Retry-After"} {
			if resp.Header.Get(h) != "" {
				t.Errorf("%s: redirect carries %s", c.method, h)
			}
		}
		req := st.last()
		if req == nil || req.Client != "127.0.0.1" || req.VO != "atlas" || req.Proto != "https" || req.Opaque.Get("authz") != "tok+x" {
			t.Errorf("%s: store saw request %+v", c.method, req)
		}
	}
}

// A directory on a director is answered from its merged List, not
// redirected.
func TestRedirectDirectoryPropfindIsListed(t *testing.T) {
	srv, _ := newRoutingServer(t, store.Route{To: []store.Endpoint{{HTTPS: "https://b:1"}}})
	resp, body := do(t, "PROPFIND", srv.URL+"/dir/", nil, "Depth", "1")
	if resp.StatusCode != http.StatusMultiStatus || !strings.Contains(body, "<D:href>/dir/merged.root</D:href>") {
		t.Fatalf("PROPFIND /dir: %d\n%s", resp.StatusCode, body)
	}
}

func TestRedirectWithoutHTTPS(t *testing.T) {
	srv, _ := newRoutingServer(t, store.Route{
		To: []store.Endpoint{{Root: "b.example.org:1094"}, {Root: "c.example.org:1094"}}})
	for _, m := range []string{"GET", "PROPFIND", "PUT"} {
		resp, body := do(t, m, srv.URL+"/store/f", bodyFor(m))
		if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Location") != "" {
			t.Fatalf("%s: %d, Location %q", m, resp.StatusCode, resp.Header.Get("Location"))
		}
		if !strings.Contains(body, "only reachable over root:// at b.example.org:1094") {
			t.Errorf("%s: body %q", m, body)
		}
	}
	srv, _ = newRoutingServer(t, store.Route{To: []store.Endpoint{{HTTPS: "not a url"}}})
	resp, body := do(t, "GET", srv.URL+"/store/f", nil)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "no https:// or root:// address") {
		t.Fatalf("bad endpoint only: %d %q", resp.StatusCode, body)
	}
}

func TestWaitIsRetryAfter(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want string
	}{{5 * time.Second, "5"}, {1500 * time.Millisecond, "2"}, {0, "1"}} {
		srv, _ := newRoutingServer(t, store.Route{Retry: true, Wait: c.wait, Reason: "locating"})
		for _, m := range []string{"GET", "HEAD", "PROPFIND", "PUT"} {
			resp, body := do(t, m, srv.URL+"/store/f", bodyFor(m))
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != c.want {
				t.Fatalf("%s wait %v: %d Retry-After %q", m, c.wait, resp.StatusCode, resp.Header.Get("Retry-After"))
			}
			if m != "HEAD" && !strings.Contains(body, "retry in "+c.want+" s") {
				t.Errorf("%s: body %q", m, body)
			}
		}
	}
}

// bodyFor is a request body that is valid for method m.
func bodyFor(m string) io.Reader {
	if m == "PUT" {
		return strings.NewReader("data")
	}
	return nil
}

func TestMergeQuery(t *testing.T) {
	for _, c := range []struct{ orig, opaque, want string }{
		{"", "", ""},
		{"a=1", "", "a=1"},
		{"", "b=2", "b=2"},
		{"a=1&vo=atlas&c", "vo=cms", "a=1&c&vo=cms"},
		{"authz=Bearer%20x&&tried=h", "tried=h,g", "authz=Bearer%20x&tried=h,g"},
		{"v%6f=atlas", "vo=cms", "vo=cms"},
	} {
		if got := mergeQuery(c.orig, c.opaque); got != c.want {
			t.Errorf("mergeQuery(%q, %q) = %q, want %q", c.orig, c.opaque, got, c.want)
		}
	}
}

// countingBody fails no test by itself; it records whether the client
// library ever had to read the upload.
type countingBody struct {
	mu    sync.Mutex
	reads int
}

func (b *countingBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	b.reads++
	b.mu.Unlock()
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// PUT is redirected before the body is read: a client that waits for
// 100 Continue sends none of it to the director.
func TestRedirectPutBeforeBody(t *testing.T) {
	srv, _ := newRoutingServer(t, store.Route{To: []store.Endpoint{{HTTPS: "https://b.example.org:8443"}}})
	body := &countingBody{}
	req, err := http.NewRequest("PUT", srv.URL+"/store/big", body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 1 << 40
	req.Header.Set("Expect", "100-continue")
	tr := &http.Transport{ExpectContinueTimeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "https://b.example.org:8443/store/big" {
		t.Fatalf("PUT: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	body.mu.Lock()
	defer body.mu.Unlock()
	if body.reads != 0 {
		t.Fatalf("client sent the body (%d reads) before the redirect", body.reads)
	}
}

// A client the namespace policy refuses gets its refusal, never a
// redirect: it learns nothing about where the file is, and the router is
// not asked about a read or an upload. (A change, which the method served
// here checks by its own rules, is routed first and refused after.)
func TestRefusedClientGetsNoRedirect(t *testing.T) {
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadToken, Write: auth.WriteToken}})
	if err != nil {
		t.Fatal(err)
	}
	st := &routingStore{route: store.Route{To: []store.Endpoint{{HTTPS: "https://b.example.org:8443"}}}}
	srv := httptest.NewServer(New(Config{}, auth.NewGuard(st, p, nil), nil))
	defer srv.Close()
	for _, m := range []string{"GET", "HEAD", "PROPFIND", "PUT", "DELETE"} {
		resp := send(t, m, srv.URL+"/store/f", "")
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden || resp.Header.Get("Location") != "" {
			t.Errorf("%s by an anonymous client: %d, Location %q; want a refusal", m, resp.StatusCode, resp.Header.Get("Location"))
		}
		if req := st.last(); req != nil && m != "DELETE" {
			t.Errorf("%s: the router was asked about a refused client's request (%+v)", m, req)
		}
	}
}
