package davclient

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
)

// newOrigin serves /store from a temp dir over https and returns the
// server, the pool dir and the handler (to wrap).
func newOrigin(t *testing.T) (http.Handler, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return webdav.New(webdav.Config{}, o, nil), dir
}

func tlsServer(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewTLSServer(h)
	t.Cleanup(s.Close)
	return s
}

func client(t *testing.T, base string, token string) *FS {
	t.Helper()
	fs, err := New(base, Options{Insecure: true, Options: outbound.Options{Token: token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.client.CloseIdleConnections)
	return fs
}

// recorder remembers what requests reached a handler.
type recorder struct {
	mu   sync.Mutex
	reqs []string // "METHOD path?query range=... auth=..."
}

func (rc *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, r.Method+" "+r.URL.RequestURI()+" range="+r.Header.Get("Range")+" auth="+r.Header.Get("Authorization"))
		rc.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rc *recorder) saw(prefix string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, r := range rc.reqs {
		if strings.HasPrefix(r, prefix) {
			return true
		}
	}
	return false
}

// Two servers sending every request to each other: the client stops after
// MaxHops with an error naming the last URL.
func TestRedirectLoopStops(t *testing.T) {
	var a, b *httptest.Server
	var hits atomic.Int32
	bounce := func(to func() string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, to()+r.URL.Path+"?authz=secret", http.StatusTemporaryRedirect)
		})
	}
	a = tlsServer(t, bounce(func() string { return b.URL }))
	b = tlsServer(t, bounce(func() string { return a.URL }))
	fs := client(t, a.URL, "")
	for _, op := range []func() error{
		func() error { _, err := fs.Stat(context.Background(), "/store/f"); return err },
		func() error { _, err := fs.Checksum(context.Background(), "/store/f", "adler32"); return err },
	} {
		hits.Store(0)
		err := op()
		if err == nil || !strings.Contains(err.Error(), "more than 16 redirects") {
			t.Fatalf("loop: %v", err)
		}
		// Request 17 is the 16th redirect; the 17th Location is not fetched.
		if n := hits.Load(); n != MaxHops+1 {
			t.Errorf("%d requests, want %d", n, MaxHops+1)
		}
		last := b.URL + "/store/f" // hop 17 would go from a to b
		if !strings.Contains(err.Error(), last) || strings.Contains(err.Error(), "secret") {
			t.Errorf("error should name %s without its query: %v", last, err)
		}
	}
}

// One hop, as a director answers: data, ranges, checksums and listings
// come from the second server byte for byte, with Range and the token
// carried across the redirect and the director's CGI added.
func TestRedirectOneHop(t *testing.T) {
	originH, dir := newOrigin(t)
	data := make([]byte, 3<<20+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "f.root"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var rb recorder
	// b wants a token, as a data server of a protected namespace does: the
	// client sends it there once b asks for it.
	b := tlsServer(t, rb.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		originH.ServeHTTP(w, r)
	})))
	// a serves PROPFIND itself for directories but redirects everything
	// else, so file reads cross the redirect with their Range header.
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "PROPFIND" && strings.HasSuffix(r.URL.Path, "/") {
			originH.ServeHTTP(w, r)
			return
		}
		code := http.StatusTemporaryRedirect
		if r.Method == "PROPFIND" {
			code = http.StatusFound // Go's client would turn this into a GET
		}
		w.Header().Set("Location", b.URL+r.URL.Path+"?sbx.hops=1")
		w.WriteHeader(code)
	}))
	fs := client(t, a.URL, "tok123")
	ctx := context.Background()

	f, err := fs.Open(ctx, "/store/d/f.root")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := f.Stat(); fi.Size != int64(len(data)) {
		t.Fatalf("size %d, want %d", fi.Size, len(data))
	}
	if !rb.saw("PROPFIND /store/d/f.root?sbx.hops=1 range= auth=Bearer tok123") {
		t.Errorf("b never saw the redirected PROPFIND with the token: %q", rb.reqs)
	}
	got := make([]byte, len(data))
	if n, err := f.ReadAt(got, 0); n != len(data) || (err != nil && err != io.EOF) {
		t.Fatalf("read all: %d %v", n, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("data differs after the redirect")
	}
	for _, r := range [][2]int64{{0, 1}, {1 << 20, 4096}, {int64(len(data)) - 100, 100}, {12345, 1<<20 + 1}} {
		p := make([]byte, r[1])
		if n, err := f.ReadAt(p, r[0]); n != len(p) || (err != nil && err != io.EOF) {
			t.Fatalf("range %v: %d %v", r, n, err)
		}
		if !bytes.Equal(p, data[r[0]:r[0]+r[1]]) {
			t.Fatalf("range %v differs", r)
		}
	}
	// Reads go straight to where Open was sent.
	if !rb.saw("GET /store/d/f.root?sbx.hops=1 range=bytes=1048576-1052671 auth=Bearer tok123") {
		t.Errorf("b never saw the ranged GET: %q", rb.reqs)
	}

	// A ranged GET that itself crosses the redirect keeps its Range.
	direct := &file{fs: fs, name: "/store/d/f.root", at: fs.url("/store/d/f.root"), info: store.FileInfo{Size: int64(len(data))}}
	p := make([]byte, 1000)
	if n, err := direct.ReadAt(p, 2<<20); n != len(p) || err != nil || !bytes.Equal(p, data[2<<20:2<<20+1000]) {
		t.Fatalf("redirected range read: %d %v", n, err)
	}
	if !rb.saw("GET /store/d/f.root?sbx.hops=1 range=bytes=2097152-2098151 auth=Bearer tok123") {
		t.Errorf("Range did not survive the redirect: %q", rb.reqs)
	}

	sum, err := fs.Checksum(ctx, "/store/d/f.root", "adler32")
	if err != nil || len(sum) != 8 {
		t.Fatalf("checksum through the redirect: %q %v", sum, err)
	}
	l, err := fs.List(ctx, "/store/d/")
	if err != nil || len(l) != 1 || l[0].Name != "f.root" {
		t.Fatalf("list: %v %v", l, err)
	}
}

// A client made for https:// follows no redirect to plain http://: the
// request (and its token, and a copy's data) would travel in clear. The
// plain server sees nothing, and the refusal names where it pointed.
func TestNoRedirectFromHTTPSToHTTP(t *testing.T) {
	var rb recorder
	b := httptest.NewServer(rb.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing", http.StatusNotFound)
	})))
	t.Cleanup(b.Close)
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(b.URL, "127.0.0.1", "localhost", 1)+r.URL.Path+"?authz=secret", http.StatusTemporaryRedirect)
	}))
	fs := client(t, a.URL, "tok123")
	_, err := fs.Stat(context.Background(), "/store/x")
	if !errors.Is(err, store.ErrPermission) || !strings.Contains(err.Error(), "from https:// to plain http://localhost") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("stat redirected to http: %v, want a refusal naming the plain URL without its query", err)
	}
	if len(rb.reqs) != 0 {
		t.Fatalf("the plain server was asked: %q", rb.reqs)
	}

	// Between plain servers redirects are followed as before, without
	// the token for another host.
	c := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(b.URL, "127.0.0.1", "localhost", 1)+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(c.Close)
	if _, err := client(t, c.URL, "tok123").Stat(context.Background(), "/store/x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("stat via a plain redirect: %v", err)
	}
	if !rb.saw("PROPFIND /store/x range= auth=") || rb.saw("PROPFIND /store/x range= auth=Bearer") {
		t.Fatalf("token leaked to another plain host: %q", rb.reqs)
	}
}

// 503 + Retry-After is waited out, within Options.MaxWait.
func TestRetryAfter(t *testing.T) {
	originH, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	var busy atomic.Int32
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if busy.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "still locating", http.StatusServiceUnavailable)
			return
		}
		originH.ServeHTTP(w, r)
	}))
	fs := client(t, a.URL, "")
	busy.Store(2)
	start := time.Now()
	fi, err := fs.Stat(context.Background(), "/store/f")
	if err != nil || fi.Size != 5 {
		t.Fatalf("stat after waits: %v %v", fi, err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("answered after %v; two Retry-After: 1 should take 2s", d)
	}

	short, err := New(a.URL, Options{Insecure: true, Options: outbound.Options{MaxWait: 1500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(short.client.CloseIdleConnections)
	busy.Store(100)
	start = time.Now()
	_, err = short.Stat(context.Background(), "/store/f")
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), "still locating") {
		t.Fatalf("endless 503: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}

	// The context bounds the wait too.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	busy.Store(100) // fs waits the default minute
	if _, err := fs.Stat(ctx, "/store/f"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

func TestRetryAfterParse(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{"0", time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{now.Add(10 * time.Second).Format(http.TimeFormat), 10 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		d, ok := retryAfter(c.v, now)
		if d != c.want || ok != c.ok {
			t.Errorf("retryAfter(%q) = %v %v, want %v %v", c.v, d, ok, c.want, c.ok)
		}
	}
}

// redirector is a director's worth of store for an end-to-end upload: it
// routes every call (an upload's create too) to one https endpoint.
type redirector struct {
	store.Store // nil: the frontend asks Route first
	to          string
}

func (r redirector) Route(ctx context.Context, c store.Call) (store.Route, error) {
	return store.Route{To: []store.Endpoint{{HTTPS: r.to}}, Opaque: "sbx.hops=1"}, nil
}

// An upload to a sitebox https director lands on the origin it redirects
// to, the body sent once, to the origin only.
func TestPutFollowsRedirect(t *testing.T) {
	originH, dir := newOrigin(t)
	var rb recorder
	b := tlsServer(t, rb.wrap(originH))
	var ra recorder
	a := tlsServer(t, ra.wrap(webdav.New(webdav.Config{}, redirector{to: b.URL}, nil)))
	fs := client(t, a.URL, "")
	data := bytes.Repeat([]byte("upload through a director "), 100000)
	w, err := fs.Create(context.Background(), "/store/up/f", store.CreateOptions{Exclusive: true, MkParents: true})
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		end := min(off+1<<20, len(data))
		if _, err := w.WriteAt(data[off:end], int64(off)); err != nil {
			t.Fatalf("write at %d: %v", off, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "up", "f"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("origin has %d bytes (%v), want %d", len(got), err, len(data))
	}
	if !ra.saw("PUT /store/up/f ") || !rb.saw("PUT /store/up/f?sbx.hops=1 ") {
		t.Fatalf("PUT path: director %q, origin %q", ra.reqs, rb.reqs)
	}
	// And the file reads back through the director.
	f, err := fs.Open(context.Background(), "/store/up/f")
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := f.ReadAt(p, 1000); err != nil || !bytes.Equal(p, data[1000:1100]) {
		t.Fatalf("read back: %v", err)
	}
}

// A server that reads part of an upload and then redirects cannot have
// the body resent: a clear error, not a truncated file elsewhere. Which
// error comes first is a race: the 307 ("cannot be resent") or, when the
// server closes the half-read connection before the client reads the
// answer, the reset of the client's write.
func TestPutRedirectAfterBodyFails(t *testing.T) {
	originH, originDir := newOrigin(t)
	b := tlsServer(t, originH)
	a := tlsServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.CopyN(io.Discard, r.Body, 1<<20)
		http.Redirect(w, r, b.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	fs := client(t, a.URL, "")
	w, err := fs.Create(context.Background(), "/store/g", store.CreateOptions{Truncate: true})
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("z"), 1<<20)
	var werr error
	for i := 0; i < 8 && werr == nil; i++ {
		_, werr = w.WriteAt(chunk, int64(i)<<20)
	}
	err = w.Close()
	if err == nil {
		err = werr
	}
	if err == nil || !strings.Contains(err.Error(), "cannot be resent") && !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("want a resend error, got %v", err)
	}
	if _, serr := os.Stat(filepath.Join(originDir, "g")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the redirect target got a file from a cut upload (stat: %v)", serr)
	}
}
