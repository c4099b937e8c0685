package cache

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// The cache reads from real protocol upstreams: a root:// server and an
// https:// server, both over a sitebox origin, built by NewUpstream from
// URLs as the config gives them.
func TestProtocolUpstreams(t *testing.T) {
	src := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16+7)
	os.MkdirAll(filepath.Join(src, "d"), 0o755)
	os.WriteFile(filepath.Join(src, "d/f"), data, 0o644)
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/data", Pools: []string{src}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	xs := xrdserver.New(xrdserver.Config{}, o, nil)
	go xs.Serve(ln)
	defer xs.Shutdown(context.Background())
	hs := httptest.NewTLSServer(webdav.New(webdav.Config{}, o, nil))
	defer hs.Close()

	for _, url := range []string{
		"root://" + ln.Addr().String() + "//data", // the cache's /store is the origin's /data
		hs.URL + "/data",
		"xroot://" + ln.Addr().String() + "//data",                   // root:// by another name
		"davs://" + strings.TrimPrefix(hs.URL, "https://") + "/data", // https:// by another name
	} {
		t.Run(url[:5], func(t *testing.T) {
			up, err := NewUpstream(url, DialOptions{Streams: 3, Options: remote.Options{Insecure: true}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := New(Config{Settings: Settings{Dir: t.TempDir(), BlockSize: 64 << 10, RAM: 16 << 20},
				Routes: []Route{{Prefix: "/store", Upstreams: []Upstream{up}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			run(t, c)
			ctx := context.Background()
			fi, err := c.Stat(ctx, "/store/d/f")
			if err != nil || fi.Size != int64(len(data)) {
				t.Fatalf("stat: %+v, %v", fi, err)
			}
			fis, err := c.List(ctx, "/store/d")
			if err != nil || len(fis) != 1 || fis[0].Name != "f" {
				t.Fatalf("list: %+v, %v", fis, err)
			}
			sum, err := c.Checksum(ctx, "/store/d/f", "adler32")
			if err != nil || len(sum) != 8 {
				t.Fatalf("checksum: %q, %v", sum, err)
			}
			f, err := c.Open(ctx, "/store/d/f")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got := make([]byte, len(data))
			if n, err := f.ReadAt(got, 0); n != len(data) || (err != nil && err.Error() != "EOF") || !bytes.Equal(got, data) {
				t.Fatalf("read %d, %v; equal %v", n, err, bytes.Equal(got, data))
			}
		})
	}
	if _, err := NewUpstream("ftp://x:1", DialOptions{}); err == nil {
		t.Fatal("ftp upstream accepted")
	}
	if _, err := NewUpstream("root://nohostport", DialOptions{}); err == nil {
		t.Fatal("upstream without port accepted")
	}
}

// voStore strips the CGI a cache adds for a VO-aware upstream, recording
// what came.
type voStore struct {
	*countingStore
	mu   sync.Mutex
	seen []string
}

// record notes name as a root:// client would send it: with the CGI of
// the cache's request upstream (store.WithUpstream).
func (s *voStore) record(ctx context.Context, name string) string {
	s.mu.Lock()
	s.seen = append(s.seen, name+"?"+store.UpstreamCGI(ctx))
	s.mu.Unlock()
	return name
}

func (s *voStore) Open(ctx context.Context, name string) (store.File, error) {
	return s.countingStore.Open(ctx, s.record(ctx, name))
}

func (s *voStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	return s.countingStore.Stat(ctx, s.record(ctx, name))
}

// A client's VO (from ?vo= or its token) reaches a root:// upstream as
// CGI on the open (or stat) that checks the file and on every fetch's
// open, so a director there can pick the VO's federation, with the mark
// that a cache is asking.
func TestVOPassedUpstream(t *testing.T) {
	var vs *voStore
	e := newEnv(t, func(c *Config) {
		vs = &voStore{countingStore: c.Routes[0].Upstreams[0].Streams[0].(*countingStore)}
		c.Routes[0].Upstreams[0].Streams = []store.Store{vs}
		c.Routes[0].Upstreams[0].PassCGI = true
	})
	want := e.file("v", 200<<10)
	ctx := store.WithRequest(context.Background(), store.NewRequest("127.0.0.1", "vo=cms"))
	f, err := e.c.Open(ctx, "/store/v")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(want))
	if n, err := f.ReadAt(buf, 0); n != len(want) || !bytes.Equal(buf, want) {
		t.Fatalf("read %d, %v", n, err)
	}
	f.Close()
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if len(vs.seen) == 0 {
		t.Fatal("upstream saw no request")
	}
	for _, s := range vs.seen {
		if s != "/store/v?sbx.via=cache&vo=cms" {
			t.Errorf("upstream asked for %q, want /store/v?sbx.via=cache&vo=cms", s)
		}
	}
}

// An https:// upstream gets a readv's scattered misses as one multi-range
// GET (as a root:// one gets one kXR_readv), and a server that answers
// such a request with the whole file gets them as one range each.
func TestScatteredMissesOverHTTPS(t *testing.T) {
	src := t.TempDir()
	data := make([]byte, 40*64<<10)
	rand.NewChaCha8([32]byte{3}).Read(data)
	os.WriteFile(filepath.Join(src, "f"), data, 0o644)
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/data", Pools: []string{src}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	dav := webdav.New(webdav.Config{}, o, nil)
	for _, c := range []struct {
		name       string
		multiRange bool // the server answers multi-range requests
	}{{"multi-range", true}, {"whole file", false}} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var ranges []string
			hs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					mu.Lock()
					ranges = append(ranges, r.Header.Get("Range"))
					mu.Unlock()
					if !c.multiRange && strings.Contains(r.Header.Get("Range"), ",") {
						r.Header.Del("Range")
					}
				}
				dav.ServeHTTP(w, r)
			}))
			defer hs.Close()
			up, err := NewUpstream(hs.URL+"/data", DialOptions{Options: remote.Options{Insecure: true}})
			if err != nil {
				t.Fatal(err)
			}
			cache, err := New(Config{Settings: Settings{Dir: t.TempDir(), RAM: 16 << 20}, Routes: []Route{{Prefix: "/store", Upstreams: []Upstream{up}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			run(t, cache)
			f, err := cache.Open(t.Context(), "/store/f")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			readScattered(t, f, data)
			mu.Lock()
			defer mu.Unlock()
			// The misses go in groups (see launch), each one multi-range
			// GET; a server answering one with the whole file is then
			// asked for each run of pages on its own.
			multi, asked := 0, 0
			for _, r := range ranges {
				if n := strings.Count(r, ","); n > 0 {
					multi++
					asked += n + 1
				} else if c.multiRange {
					asked++
				}
			}
			switch {
			case c.multiRange && (multi == 0 || asked != scatteredRuns):
				t.Errorf("GETs with Range %q, want the %d runs of pages touched in multi-range GETs", ranges, scatteredRuns)
			case !c.multiRange && (multi != 1 || len(ranges) != 1+scatteredRuns):
				t.Errorf("GETs with Range %q, want one multi-range GET, then one per run of pages", ranges)
			}
		})
	}
}
