package client

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/server"
	"sitebox/internal/xrootd/xrdtest"
)

// serve starts our root:// server over st on 127.0.0.1 until the test
// ends.
func serve(t *testing.T, st store.Store) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{}, st, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// newOrigin exports a fresh directory as "/".
func newOrigin(t *testing.T) (store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, dir
}

// federation is a data server and n directors in a chain in front of it:
// director i redirects everything to director i+1, the last to the data
// server, each adding its hop count as CGI as sitebox's director does.
type federation struct {
	data      *xrdtest.RouteStore
	dataAddr  string
	dir       string
	directors []*xrdtest.RouteStore
	addrs     []string // directors' addresses
}

func newFederation(t *testing.T, n int) *federation {
	t.Helper()
	o, dir := newOrigin(t)
	fed := &federation{data: &xrdtest.RouteStore{Store: o}, dir: dir}
	fed.dataAddr = serve(t, fed.data)
	next := fed.dataAddr
	for i := n - 1; i >= 0; i-- {
		empty, _ := newOrigin(t)
		rs := &xrdtest.RouteStore{Store: empty}
		rs.Decide = xrdtest.RedirectAll([]store.Endpoint{{HTTPS: "https://127.0.0.1:1"}, {Root: next}}, "sbx.hops="+string(rune('1'+i)))
		next = serve(t, rs)
		fed.directors = append([]*xrdtest.RouteStore{rs}, fed.directors...)
		fed.addrs = append([]string{next}, fed.addrs...)
	}
	return fed
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Every operation follows one redirect; a file opened after a redirect
// reads from the server that opened it.
func TestFollowOneRedirect(t *testing.T) {
	fed := newFederation(t, 1)
	data := bytes.Repeat([]byte("0123456789abcdef"), 40000)
	if err := os.MkdirAll(filepath.Join(fed.dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fed.dir, "d/f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := NewFS(fed.addrs[0])
	defer fs.Close()
	ctx := testCtx(t)

	fi, err := fs.Stat(ctx, "/d/f")
	if err != nil || fi.Size != int64(len(data)) || fi.Name != "f" {
		t.Fatalf("stat: %+v %v", fi, err)
	}
	f, err := fs.Open(ctx, "/d/f")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.(*File).c.Addr(); got != fed.dataAddr {
		t.Fatalf("file opened on %s, want the data server %s", got, fed.dataAddr)
	}
	buf := make([]byte, len(data))
	if n, err := f.ReadAt(buf, 0); n != len(data) || err != nil || !bytes.Equal(buf, data) {
		t.Fatalf("read after redirect: %d %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if l, err := fs.List(ctx, "/d"); err != nil || len(l) != 1 || l[0].Name != "f" {
		t.Fatalf("list: %+v %v", l, err)
	}
	if _, err := fs.Checksum(ctx, "/d/f", "adler32"); err != nil {
		t.Fatalf("checksum: %v", err)
	}
	if l, err := fs.Locate(ctx, "/d/f"); err != nil || len(l) != 1 {
		t.Fatalf("locate: %+v %v", l, err)
	}
	// Writes and namespace changes go where the director sends them.
	w, err := fs.Create(ctx, "/d/new", store.CreateOptions{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("mkdir", fs.Mkdir(ctx, "/d/sub", 0o755, false))
	must("mv", fs.Rename(ctx, "/d/new", "/d/sub/moved"))
	must("chmod", fs.Chmod(ctx, "/d/sub/moved", 0o600))
	if b, err := os.ReadFile(filepath.Join(fed.dir, "d/sub/moved")); err != nil || string(b) != "hello" {
		t.Fatalf("written file on the data server: %q %v", b, err)
	}
	must("rm", fs.Remove(ctx, "/d/sub/moved"))
	must("rmdir", fs.Rmdir(ctx, "/d/sub"))
	if _, err := fs.Stat(ctx, "/d/sub"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stat of removed dir: %v", err)
	}
	// Every one of those reached the data server through the director.
	seen := map[string]bool{}
	for _, c := range fed.data.Calls() {
		seen[c.Op] = true
		if c.Req.Opaque.Get("sbx.hops") != "1" {
			t.Errorf("%s %s reached the data server with CGI %v", c.Op, c.Name, c.Req.Opaque)
		}
	}
	for _, op := range []string{"stat", "open", "list", "checksum", "locate", "create", "mkdir", "mv", "chmod", "rm", "rmdir"} {
		if !seen[op] {
			t.Errorf("%s never reached the data server", op)
		}
	}
}

// Several hops: each redirect's CGI replaces the previous one's value,
// and the caller's own CGI travels all the way.
func TestFollowSeveralHops(t *testing.T) {
	fed := newFederation(t, 3)
	if err := os.WriteFile(filepath.Join(fed.dir, "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := NewFS(fed.addrs[0])
	defer fs.Close()
	f, err := fs.Open(testCtx(t), "//./f?vo=cms&authz=tok")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.(*File).c.Addr(); got != fed.dataAddr {
		t.Fatalf("file opened on %s, want %s", got, fed.dataAddr)
	}
	for i, d := range fed.directors {
		c := d.Last("open")
		if c == nil || c.Name != "/f" || c.Req.VO != "cms" {
			t.Fatalf("director %d saw %+v", i, c)
		}
	}
	c := fed.data.Last("open")
	if c == nil || c.Name != "/f" {
		t.Fatalf("data server saw %+v", c)
	}
	if q := c.Req.Opaque; q.Get("sbx.hops") != "3" || len(q["sbx.hops"]) != 1 || q.Get("vo") != "cms" || q.Get("authz") != "tok" {
		t.Fatalf("data server saw CGI %v", q)
	}
	b := make([]byte, 3)
	if n, err := f.ReadAt(b, 0); n != 3 || string(b) != "abc" {
		t.Fatalf("read: %q %v", b[:n], err)
	}
}

// Two directors sending a request back and forth stop it after 16
// redirects with an error naming the loop, promptly.
func TestRedirectLoopBetweenServers(t *testing.T) {
	emptyA, _ := newOrigin(t)
	emptyB, _ := newOrigin(t)
	a := &xrdtest.RouteStore{Store: emptyA}
	b := &xrdtest.RouteStore{Store: emptyB}
	addrA, addrB := serve(t, a), serve(t, b)
	a.SetRoute(xrdtest.RedirectAll([]store.Endpoint{{Root: addrB}}, "x=a"))
	b.SetRoute(xrdtest.RedirectAll([]store.Endpoint{{Root: addrA}}, "x=b"))
	fs := NewFS(addrA)
	defer fs.Close()
	start := time.Now()
	_, err := fs.Stat(testCtx(t), "/f")
	if !errors.Is(err, ErrRedirectLimit) || !strings.Contains(err.Error(), "redirect limit of 16 reached: loop between directors?") {
		t.Fatalf("stat through a loop: %v", err)
	}
	// 16 redirects followed from A: the 17th answer came from A again.
	if !strings.Contains(err.Error(), "the last, "+addrA+", sent it on to "+addrB) {
		t.Fatalf("error does not name the last host: %v", err)
	}
	if n := len(a.Calls()) + len(b.Calls()); n != MaxRedirects+1 {
		t.Fatalf("%d requests sent, want %d", n, MaxRedirects+1)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("loop took %v to stop", el)
	}
}

// A server the director chose that is down, or has lost the file, sends
// the client back to the director with tried= (and triedrc=), as XrdCl
// does; the director then picks another. Errors that another server
// would share are not retried.
func TestBackToDirectorWithTried(t *testing.T) {
	fed := newFederation(t, 0)
	if err := os.WriteFile(filepath.Join(fed.dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	lost, lostDir := newOrigin(t) // answers, but has no /f
	if err := os.Mkdir(filepath.Join(lostDir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	lostAddr := serve(t, lost)

	empty, _ := newOrigin(t)
	dir := &xrdtest.RouteStore{Store: empty}
	dir.SetRoute(func(op, name string) (store.Route, error) {
		tried := dir.Last(op).Req.Opaque.Get("tried")
		to := dead
		switch {
		case strings.Contains(tried, lostAddr):
			to = fed.dataAddr
		case strings.Contains(tried, dead):
			to = lostAddr
		}
		return store.Route{To: []store.Endpoint{{Root: to}}, Reason: "test"}, nil
	})
	fs := NewFS(serve(t, dir))
	defer fs.Close()
	fi, err := fs.Stat(testCtx(t), "/f")
	if err != nil || fi.Size != 4 {
		t.Fatalf("stat after a dead and a lost replica: %+v %v", fi, err)
	}
	var got []string
	for _, c := range dir.Calls() {
		got = append(got, c.Req.Opaque.Encode())
	}
	want := []string{"", "tried=" + dead, "tried=" + dead + "," + lostAddr + "&triedrc=enoent"}
	for i := range want {
		want[i] = url.Values(mustParseQuery(t, want[i])).Encode()
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("director saw CGI %q, want %q", got, want)
	}

	// A refusal is the answer wherever the client goes: not retried.
	dir.SetRoute(xrdtest.RedirectAll([]store.Endpoint{{Root: lostAddr}}, ""))
	before := len(dir.Calls())
	if _, err := fs.Open(testCtx(t), "/d"); !errors.Is(err, store.ErrIsDir) {
		t.Fatalf("open of a directory: %v", err)
	}
	if n := len(dir.Calls()) - before; n != 1 {
		t.Errorf("director asked %d times", n)
	}
}

func mustParseQuery(t *testing.T, s string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// kXR_wait is honoured at the same server, then the operation goes on
// (here to a redirect and the data).
func TestWaitThenSuccess(t *testing.T) {
	fed := newFederation(t, 1)
	if err := os.WriteFile(filepath.Join(fed.dir, "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	redirect := fed.directors[0].Decide
	fed.directors[0].SetRoute(func(op, name string) (store.Route, error) {
		if calls.Add(1) == 1 {
			return store.Route{Retry: true, Wait: 200 * time.Millisecond, Reason: "searching"}, nil
		}
		return redirect(op, name)
	})
	fs := NewFS(fed.addrs[0])
	defer fs.Close()
	start := time.Now()
	fi, err := fs.Stat(testCtx(t), "/f")
	if err != nil || fi.Size != 3 {
		t.Fatalf("stat after a wait: %+v %v", fi, err)
	}
	if el := time.Since(start); el < time.Second || calls.Load() != 2 {
		t.Fatalf("stat took %v and %d calls: the wait (rounded up to 1 s) was not honoured", el, calls.Load())
	}
}

// A server that keeps asking the client to wait is given up on once the
// operation's budget is spent, and a caller's deadline ends a wait early.
func TestWaitIsBounded(t *testing.T) {
	o, _ := newOrigin(t)
	var wait atomic.Int64
	rs := &xrdtest.RouteStore{Store: o, Decide: func(op, name string) (store.Route, error) {
		return store.Route{Retry: true, Wait: time.Duration(wait.Load()), Reason: "busy"}, nil
	}}
	addr := serve(t, rs)
	fs := NewFSOptions(addr, Options{Options: outbound.Options{MaxWait: 1500 * time.Millisecond}})
	defer fs.Close()

	wait.Store(int64(time.Second))
	start := time.Now()
	_, err := fs.Stat(testCtx(t), "/f")
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "giving up") || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("endless waits: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("gave up after %v", el)
	}
	// A wait longer than the budget fails at once.
	wait.Store(int64(time.Minute))
	start = time.Now()
	if _, err := fs.Stat(testCtx(t), "/f"); !errors.Is(err, store.ErrUnavailable) || time.Since(start) > time.Second {
		t.Fatalf("wait past the budget: %v after %v", err, time.Since(start))
	}
	fs = NewFS(addr) // the default budget, a minute
	defer fs.Close()
	wait.Store(int64(5 * time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := fs.Stat(ctx, "/f"); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("wait under a deadline: %v after %v", err, time.Since(start))
	}
}

// CGI given by the caller is sent; the path part is still cleaned and
// checked before anything is sent.
func TestCallerCGI(t *testing.T) {
	o, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs := &xrdtest.RouteStore{Store: o}
	fs := NewFS(serve(t, rs))
	defer fs.Close()
	ctx := testCtx(t)
	if _, err := fs.Stat(ctx, "/./f/?vo=atlas&a=%41"); err != nil {
		t.Fatal(err)
	}
	c := rs.Last("stat")
	if c == nil || c.Name != "/f" || c.Req.VO != "atlas" || c.Req.Opaque.Get("a") != "A" {
		t.Fatalf("server saw %+v", c)
	}
	if _, err := fs.Checksum(ctx, "/f?vo=cms&cks.type=crc32c", "adler32"); err != nil {
		t.Fatal(err)
	}
	if c := rs.Last("checksum"); c == nil || c.Req.VO != "cms" || c.Req.Opaque.Get("cks.type") != "adler32" || len(c.Req.Opaque["cks.type"]) != 1 {
		t.Fatalf("checksum: server saw %+v", c)
	}
	if err := fs.Rename(ctx, "/f?vo=cms", "/g?vo=cms&dst=1"); err != nil {
		t.Fatal(err)
	}
	if c := rs.Last("mv"); c == nil || c.Name != "/f" || c.Req.Opaque.Get("dst") != "1" {
		t.Fatalf("mv: server saw %+v", c)
	}
	n := len(rs.Calls())
	for _, bad := range []string{"/../etc/passwd?vo=cms", "?vo=cms", "/a\x00b?x=1"} {
		if _, err := fs.Stat(ctx, bad); !errors.Is(err, store.ErrInvalid) || strings.Contains(err.Error(), "vo=cms") {
			t.Errorf("stat %q: %v", bad, err)
		}
	}
	if len(rs.Calls()) != n {
		t.Fatal("a bad path was sent to the server")
	}
}

func TestMergeCGI(t *testing.T) {
	for _, tc := range []struct{ cur, add, want string }{
		{"", "", ""},
		{"vo=cms", "", "vo=cms"},
		{"", "sbx.hops=1", "sbx.hops=1"},
		{"vo=cms&sbx.hops=1", "sbx.hops=2", "vo=cms&sbx.hops=2"},
		{"a=1&&b=%zz", "&c=3&", "a=1&b=%zz&c=3"},
		{"tried=a&x", "tried=b&x=1", "tried=b&x=1"},
	} {
		if got := mergeCGI(tc.cur, tc.add); got != tc.want {
			t.Errorf("mergeCGI(%q, %q) = %q, want %q", tc.cur, tc.add, got, tc.want)
		}
	}
}
