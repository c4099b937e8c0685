package server

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/xrdtest"
	"sitebox/test/peers"
)

// redirectPair starts a data server holding /data/f and a "director" in
// front of it that redirects /data paths there with CGI: what a real
// client meets in a federation.
func redirectPair(t *testing.T, data []byte) (director, dataAddr string, dir string, ds *xrdtest.RouteStore, route *atomic.Value) {
	t.Helper()
	origin, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "data/f"), data)
	ds = &xrdtest.RouteStore{Store: origin}
	dataAddr = startServer(t, Config{ServerName: "data"}, ds)
	empty, _ := newOriginStore(t, false)
	route = &atomic.Value{}
	route.Store(xrdtest.RedirectAll([]store.Endpoint{{HTTPS: "https://127.0.0.1:1"}, {Root: dataAddr}}, "vo=cms&sbx.hops=1"))
	rs := &xrdtest.RouteStore{Store: empty, Decide: func(op, name string) (store.Route, error) {
		return route.Load().(func(op, name string) (store.Route, error))(op, name)
	}}
	director = startServer(t, Config{ServerName: "director"}, rs)
	return director, dataAddr, dir, ds, route
}

// xrdcp and xrdfs stat follow our kXR_redirect to a second server, which
// sees the redirect's CGI, and get the same bytes.
func TestRealClientFollowsRedirect(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "xrdfs")
	data := patterned(5<<20 + 321)
	director, _, dir, ds, _ := redirectPair(t, data)
	dst := filepath.Join(t.TempDir(), "f")
	mustRun(t, nil, "xrdcp", "-f", "-s", "root://"+director+"//data/f?vo=cms&mine=1", dst)
	sameFile(t, filepath.Join(dir, "data/f"), dst)
	c := ds.Last("open")
	if c == nil || c.Name != "/data/f" {
		t.Fatalf("data server saw no open: %+v", c)
	}
	// XrdCl merges the redirect's CGI into the path's, its own kept.
	if q := c.Req.Opaque; q.Get("sbx.hops") != "1" || q.Get("vo") != "cms" || q.Get("mine") != "1" {
		t.Fatalf("data server saw CGI %v", q)
	}
	// An upload is redirected like a download (a director sends writes to
	// an origin) and lands on the data server.
	mustRun(t, nil, "xrdcp", "-f", "-s", dst, "root://"+director+"//data/up")
	sameFile(t, dst, filepath.Join(dir, "data/up"))
	out := mustRun(t, nil, "xrdfs", "root://"+director, "stat", "/data/f")
	if !strings.Contains(out, "Size:   5243201") {
		t.Fatalf("xrdfs stat through a redirect: %q", out)
	}
	if c := ds.Last("stat"); c == nil || c.Req.Opaque.Get("sbx.hops") != "1" {
		t.Fatalf("data server saw stat %+v", c)
	}
}

// xrdcp honours kXR_wait: a director still searching, then redirecting.
func TestRealClientWaitsThenFollows(t *testing.T) {
	peers.Require(t, "xrdcp")
	data := patterned(100<<10 + 1)
	director, dataAddr, dir, _, route := redirectPair(t, data)
	var calls atomic.Int32
	redirect := xrdtest.RedirectAll([]store.Endpoint{{Root: dataAddr}}, "sbx.hops=1")
	route.Store(func(op, name string) (store.Route, error) {
		if calls.Add(1) == 1 {
			return store.Route{Retry: true, Wait: time.Second, Reason: "searching"}, nil
		}
		return redirect(op, name)
	})
	dst := filepath.Join(t.TempDir(), "f")
	start := time.Now()
	mustRun(t, nil, "xrdcp", "-f", "-s", "root://"+director+"//data/f", dst)
	sameFile(t, filepath.Join(dir, "data/f"), dst)
	if el := time.Since(start); el < time.Second || calls.Load() < 2 {
		t.Fatalf("xrdcp finished in %v after %d calls: the wait was not honoured", el, calls.Load())
	}
}

// xrdfs locate shows every replica the store's Locate gives.
func TestRealClientLocateReplicas(t *testing.T) {
	peers.Require(t, "xrdfs")
	origin, _ := newOriginStore(t, false)
	rs := &xrdtest.RouteStore{Store: origin, Locs: []store.Location{
		{Endpoint: "127.0.0.1:1111"},
		{Endpoint: "127.0.0.2:2222", Writable: true},
	}}
	addr := startServer(t, Config{}, rs)
	out := mustRun(t, nil, "xrdfs", "root://"+addr, "locate", "/data/f")
	t.Logf("xrdfs locate:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "127.0.0.1:1111 Server Read") || !strings.Contains(lines[1], "127.0.0.2:2222 Server ReadWrite") {
		t.Fatalf("xrdfs locate: %q", out)
	}
}
