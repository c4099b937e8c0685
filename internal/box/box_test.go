package box

import (
	"net"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// A listener that cannot bind fails New with a message naming it, after
// releasing what was already built (no panic, no leaked origin).
func TestNewReportsBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
		Server:  config.Server{StateDir: t.TempDir()},
		Root:    xrdserver.Settings{Addr: ln.Addr().String()},
		HTTPS:   webdav.Settings{Addr: config.Off},
	}
	cfg.ApplyDefaults("test", false)
	b, err := New(cfg, nil)
	if err == nil || b != nil || !strings.Contains(err.Error(), "root:// listener") {
		t.Fatalf("New = %v, %v; want a root:// listener error", b, err)
	}
}

// Exports and cache routes side by side: both prefixes are served, and
// the namespace root lists them. Neither routes, so the namespace,
// guarded or not, offers no Router: no request is asked where it goes.
func TestOriginAndCacheTogether(t *testing.T) {
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/local", Pools: []string{t.TempDir()}}},
		Cache: cache.Settings{Dir: t.TempDir(), Routes: []cache.RouteEntry{
			{Prefix: "/remote", Upstreams: []string{"root://127.0.0.1:1"}},
		}},
		Server: config.Server{StateDir: t.TempDir()},
		Root:   xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:  webdav.Settings{Addr: config.Off},
	}
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Cache() == nil {
		t.Fatal("no cache built")
	}
	p, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/local", Read: auth.ReadToken}})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]store.Store{"namespace": b.store, "guarded namespace": auth.NewGuard(b.store, p, nil)} {
		if _, ok := store.As[store.Router](s); ok {
			t.Errorf("the %s of an origin and a cache offers a Router", name)
		}
	}
	fis, err := b.store.List(t.Context(), "/")
	if err != nil || len(fis) != 2 || fis[0].Name != "local" || fis[1].Name != "remote" {
		t.Fatalf("root listing %+v, %v", fis, err)
	}
}

// A director routes: its namespace offers the Router, alone or on its
// own listeners beside data roles, whose namespace does not.
func TestDirectorRoutes(t *testing.T) {
	for _, beside := range []bool{false, true} {
		cfg := &config.Config{
			Director: director.Settings{Enabled: true},
			Server:   config.Server{StateDir: t.TempDir()},
			Root:     xrdserver.Settings{Addr: "127.0.0.1:0"},
			HTTPS:    webdav.Settings{Addr: config.Off},
		}
		if beside {
			cfg.Director.RootAddr = "127.0.0.1:0"
			cfg.Exports = []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}}
		}
		cfg.ApplyDefaults("test", false)
		b, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := b.store
		if beside {
			if _, ok := store.As[store.Router](b.store); ok {
				t.Error("the data namespace beside a director offers a Router")
			}
			dir = b.dirStore
		}
		if _, ok := store.As[store.Router](dir); !ok {
			t.Errorf("director (beside data roles: %v) offers no Router", beside)
		}
		b.Close()
	}
}
