package box

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/admin"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// runBox starts cfg and stops it when the test ends, checking that the
// admin socket is removed on the way out.
func runBox(t *testing.T, cfg *config.Config) *Box {
	t.Helper()
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if _, err := os.Lstat(admin.SocketPath(cfg.Server.StateDir)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("admin socket left behind after shutdown (%v)", err)
		}
	})
	return b
}

// A cache box in front of an origin box: a read through the cache shows
// up in `sitebox cache stats` (the admin socket) and in /metrics on the
// configured address.
func TestAdminAndMetricsOfARunningCache(t *testing.T) {
	pool := t.TempDir()
	data := bytes.Repeat([]byte("sitebox!"), 3<<17) // 3 MiB
	if err := os.WriteFile(filepath.Join(pool, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	orig := runBox(t, &config.Config{
		Server:  config.Server{StateDir: t.TempDir()},
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{pool}}},
		Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:   webdav.Settings{Addr: config.Off},
	})
	state := t.TempDir()
	c := runBox(t, &config.Config{
		Server: config.Server{StateDir: state, MetricsAddr: "127.0.0.1:0"},
		Cache: cache.Settings{Dir: t.TempDir(), Routes: []cache.RouteEntry{
			{Prefix: "/store", Upstreams: []string{"root://" + orig.RootAddr().String()}},
		}},
		Root:  xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS: webdav.Settings{Addr: config.Off},
	})

	ctx := t.Context()
	f, err := c.store.Open(ctx, "/store/f")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if _, err := f.ReadAt(got, 0); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	f.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("read through the cache differs from the origin's file")
	}

	cl := admin.NewClient(state)
	st, err := cl.Stats(ctx)
	if err != nil {
		t.Fatalf("admin stats: %v", err)
	}
	if st.MissBytes+st.BypassBytes != int64(len(data)) || st.UpstreamBytes < int64(len(data)) {
		t.Errorf("stats after one cold read of %d bytes: %+v", len(data), st)
	}
	// The blocks reach the disk behind the read (write-behind): a file is
	// listed once some are there.
	var ents []cache.EntryInfo
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ents, err = cl.Entries(ctx, "/store")
		if err != nil || len(ents) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(ents) != 1 || ents[0].Path != "/store/f" || ents[0].Size != int64(len(data)) {
		t.Errorf("admin ls = %+v, %v", ents, err)
	}

	resp, err := http.Get("http://" + c.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"sitebox_cache_upstream_bytes_total", `sitebox_cache_served_bytes_total{source="miss"}`, "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if orig.MetricsAddr() != nil {
		t.Error("metrics listener bound without server.metrics_addr")
	}
}

// A second box on the same state dir is refused with a clear message
// instead of stealing the first one's admin socket.
func TestSecondBoxOnSameStateDir(t *testing.T) {
	state := t.TempDir()
	mk := func() *config.Config {
		return &config.Config{
			Server:  config.Server{StateDir: state},
			Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
			Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
			HTTPS:   webdav.Settings{Addr: config.Off},
		}
	}
	runBox(t, mk())
	cfg := mk()
	cfg.ApplyDefaults("test", false)
	b, err := New(cfg, nil)
	if err == nil {
		b.Close()
		t.Fatal("second box on the same state dir started")
	}
	if !errors.Is(err, admin.ErrRunning) || !strings.Contains(err.Error(), state) {
		t.Fatalf("error %q; want one naming the state dir and saying a box runs there", err)
	}
}
