package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/cache"
	"sitebox/internal/metrics"
	"sitebox/internal/store"
)

// The real cache must keep fitting the interface.
var _ Cache = (*cache.Cache)(nil)

// fakeCache behaves like the real cache's Evict: ErrNotFound when nothing
// is cached below the path, ErrBusy (keeping them) when files are open.
type fakeCache struct {
	mu      sync.Mutex
	stats   cache.Stats
	entries []cache.EntryInfo
}

func (f *fakeCache) Stats() cache.Stats { return f.stats }

func (f *fakeCache) Entries() []cache.EntryInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]cache.EntryInfo(nil), f.entries...)
}

// EntriesPage pages the fake's entries (kept in path order) as the
// cache does.
func (f *fakeCache) EntriesPage(prefix, after string, limit int) ([]cache.EntryInfo, error) {
	var out []cache.EntryInfo
	for _, e := range f.Entries() {
		if store.HasPrefix(e.Path, prefix) && e.Path > after && len(out) < limit {
			out = append(out, e)
		}
	}
	return out, nil
}

func (f *fakeCache) Evict(_ context.Context, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var kept, busy []cache.EntryInfo
	found := 0
	for _, e := range f.entries {
		switch {
		case !store.HasPrefix(e.Path, p) || e.Present == 0:
			kept = append(kept, e)
		case e.Open > 0:
			found++
			kept, busy = append(kept, e), append(busy, e)
		default:
			found++
		}
	}
	f.entries = kept
	switch {
	case found == 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: nothing cached there", store.ErrNotFound)}
	case len(busy) > 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: %d of %d cached files are open and were kept", store.ErrBusy, len(busy), found)}
	}
	return nil
}

func newFake() *fakeCache {
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return &fakeCache{
		stats: cache.Stats{
			HitBytes: 700, MissBytes: 200, BypassBytes: 100, HitRequests: 7, MissRequests: 2,
			UpstreamBytes: 350, UsedBytes: 190, Files: 3, OpenFiles: 1, RAMLimit: 1 << 30,
			DiskError: "write data/x: no space left on device",
		},
		entries: []cache.EntryInfo{
			{Path: "/pub/c.root", Size: 10, CachedBytes: 10, Blocks: 1, Present: 1, LastAccess: t0},
			{Path: "/store/a.root", Size: 100, CachedBytes: 60, Blocks: 4, Present: 3, LastAccess: t0},
			{Path: "/store/b.root", Size: 200, CachedBytes: 120, Blocks: 4, Present: 2, Open: 1, LastAccess: t0},
		},
	}
}

// startServer serves the admin API with c (may be nil) on a socket in a
// fresh state dir and stops it when the test ends.
func startServer(t *testing.T, c Cache) (stateDir string) {
	t.Helper()
	stateDir = t.TempDir()
	reg := metrics.NewRegistry()
	if f, ok := c.(*fakeCache); ok {
		reg.MustRegister(metrics.NewCacheCollector(f.Stats))
	}
	s := New(reg, c, slog.New(slog.NewTextHandler(t.Output(), nil)))
	ln, err := s.Listen(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return stateDir
}

// get does a raw request over the socket, for what the Client does not cover.
func get(t *testing.T, stateDir, method, path string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", SocketPath(stateDir))
	}}}
	req, _ := http.NewRequest(method, "http://x"+path, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestStatsRoundTrip(t *testing.T) {
	f := newFake()
	c := NewClient(startServer(t, f))
	got, err := c.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f.stats) {
		t.Errorf("got %+v\nwant %+v", got, f.stats)
	}
}

func TestSocketMode(t *testing.T) {
	dir := startServer(t, newFake())
	fi, err := os.Stat(SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want socket 0600", fi.Mode())
	}
}

func TestLs(t *testing.T) {
	c := NewClient(startServer(t, newFake()))
	tests := []struct {
		name, prefix string
		want         []string
		status       int
	}{
		{"all", "", []string{"/pub/c.root", "/store/a.root", "/store/b.root"}, 200},
		{"prefix", "/store", []string{"/store/a.root", "/store/b.root"}, 200},
		{"unclean prefix", "//store/", []string{"/store/a.root", "/store/b.root"}, 200},
		{"whole elements only", "/sto", nil, 200},
		{"one file", "/store/a.root", []string{"/store/a.root"}, 200},
		{"dotdot", "/store/../etc", nil, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := c.Entries(context.Background(), tt.prefix)
			if tt.status != 200 {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != tt.status {
					t.Fatalf("err %v, want status %d", err, tt.status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Path)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if _, body := get(t, c.stateDir, "GET", "/cache/ls?prefix=/nothing"); strings.TrimSpace(body) != "[]" {
		t.Errorf("empty listing is %q, want []", body)
	}
}

// GET /cache/ls answers a page at a time; bad paging parameters are
// refused with 400 and a message naming them.
func TestLsPages(t *testing.T) {
	c := NewClient(startServer(t, newFake()))
	ctx := context.Background()
	var got []string
	for after := ""; ; {
		page, err := c.EntriesPage(ctx, "", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			got = append(got, e.Path)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].Path
	}
	if want := []string{"/pub/c.root", "/store/a.root", "/store/b.root"}; !reflect.DeepEqual(got, want) {
		t.Errorf("pages gave %v, want %v", got, want)
	}
	for _, tt := range []struct{ name, query, msg string }{
		{"limit zero", "limit=0", "want a number from 1 to"},
		{"limit too big", "limit=100001", "from 1 to 100000"},
		{"limit not a number", "limit=ten", "ten"},
		{"after not clean", "after=/a/../b", "not a path from a listing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, c.stateDir, "GET", "/cache/ls?"+tt.query)
			if code != http.StatusBadRequest || !strings.Contains(body, tt.msg) {
				t.Errorf("status %d body %q, want 400 with %q", code, body, tt.msg)
			}
		})
	}
}

func TestEvict(t *testing.T) {
	f := newFake()
	c := NewClient(startServer(t, f))
	tests := []struct {
		name, path string
		status     int
		sentinel   error
		files      []string
		msg        string
	}{
		{"one file", "/store/a.root", 200, nil, []string{"/store/a.root"}, ""},
		{"again: nothing cached", "/store/a.root", 404, store.ErrNotFound, nil, "nothing cached there"},
		{"never cached", "/other", 404, store.ErrNotFound, nil, "nothing cached there"},
		{"open file", "/store", 409, store.ErrBusy, nil, "open and were kept"},
		{"empty path", "", 400, store.ErrInvalid, nil, "empty path"},
		{"dotdot", "/store/../pub", 400, store.ErrInvalid, nil, "'..'"},
		{"directory", "/pub/", 200, nil, []string{"/pub/c.root"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Evict(context.Background(), tt.path)
			if tt.status != 200 {
				var se *StatusError
				if !errors.As(err, &se) || se.Status != tt.status || !errors.Is(err, tt.sentinel) || !strings.Contains(se.Msg, tt.msg) {
					t.Fatalf("err %v, want status %d (%v) with %q", err, tt.status, tt.sentinel, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var bytes int64
			for _, e := range res.Files {
				got = append(got, e.Path)
				bytes += e.CachedBytes
			}
			if !reflect.DeepEqual(got, tt.files) || res.Bytes != bytes {
				t.Errorf("evicted %v (%d bytes), want %v (%d)", got, res.Bytes, tt.files, bytes)
			}
		})
	}
	if es := f.Entries(); len(es) != 1 || es[0].Path != "/store/b.root" {
		t.Errorf("left in cache: %v, want only the open /store/b.root", es)
	}
	if code, _ := get(t, c.stateDir, "GET", "/cache/evict?path=/pub"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET evict: status %d, want 405", code)
	}
}

func TestMetrics(t *testing.T) {
	code, body := get(t, startServer(t, newFake()), "GET", "/metrics")
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{
		`sitebox_cache_served_bytes_total{source="hit"} 700`,
		`sitebox_cache_served_bytes_total{source="bypass"} 100`,
		`sitebox_cache_block_requests_total{result="miss"} 2`,
		`sitebox_cache_upstream_bytes_total 350`,
		`sitebox_cache_used_bytes 190`,
		`sitebox_cache_files 3`,
		`sitebox_cache_ram_limit_bytes 1.073741824e+09`,
		`sitebox_cache_disk_healthy 0`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNoCache(t *testing.T) {
	for name, c := range map[string]Cache{"nil": nil, "typed nil": (*cache.Cache)(nil)} {
		t.Run(name, func(t *testing.T) {
			dir := startServer(t, c)
			for _, r := range []struct{ method, path string }{
				{"GET", "/cache/stats"}, {"GET", "/cache/ls"}, {"POST", "/cache/evict?path=/a"},
			} {
				code, body := get(t, dir, r.method, r.path)
				if code != 404 || !strings.Contains(body, "this box runs no cache") {
					t.Errorf("%s %s: %d %s", r.method, r.path, code, body)
				}
			}
			if code, body := get(t, dir, "GET", "/metrics"); code != 200 || strings.Contains(body, "sitebox_cache_") {
				t.Errorf("/metrics without a cache: %d, has cache metrics: %v", code, strings.Contains(body, "sitebox_cache_"))
			}
		})
	}
}
