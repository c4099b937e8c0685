package box

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/jobs"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// jobsSlot is the slot user of this package's tests (each package its
// own: a job's end kills whatever its slot user runs).
const jobsSlot = "sbxslot22"

// jobsBoxConfig is a jobs box whose pool, cache dir and stage token sit
// where slot users can search (as /srv or /etc are), made with modes
// that keep them out.
func jobsBoxConfig(t *testing.T) (cfg *config.Config, pool, cacheDir, token string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running jobs as slot users needs root")
	}
	if _, err := user.Lookup(jobsSlot); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("slot user %s: %v (scripts/setup.sh makes it)", jobsSlot, err)
		}
		t.Skipf("slot user %s: %v (scripts/setup.sh makes it)", jobsSlot, err)
	}
	top := t.TempDir()
	for _, p := range []string{filepath.Dir(top), top} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	pool, cacheDir, token = filepath.Join(top, "pool"), filepath.Join(top, "cache"), filepath.Join(top, "stage.token")
	for _, d := range []string{pool, cacheDir} {
		if err := os.Mkdir(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(token, []byte("a-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(top, "state")
	if _, err := auth.GenerateKey(filepath.Join(state, IssuerDir)); err != nil { // who submits
		t.Fatal(err)
	}
	cfg = &config.Config{
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{pool}}},
		Cache: cache.Settings{Dir: cacheDir, Routes: []cache.RouteEntry{
			{Prefix: "/remote", Upstreams: []string{"root://127.0.0.1:1"}},
		}},
		Server: config.Server{StateDir: state},
		// The stage token is for a site cache on another server, judged
		// by namespace rules (see config's stage token checks).
		Auth: auth.Settings{SiteIssuer: true, IssuerURL: "https://box.example:8443",
			Namespaces: []auth.NamespaceEntry{{Prefix: "/store"}}},
		Root:  xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS: webdav.Settings{Addr: "127.0.0.1:0"},
		Jobs: jobs.Settings{Enabled: true, SlotUsers: []string{jobsSlot}, CPUs: 1, StageTokenFile: token,
			Cache: "roots://t3-cache.example.org:1094"},
	}
	cfg.ApplyDefaults("test", true)
	return cfg, pool, cacheDir, token
}

// A jobs box refuses to start while a slot user could read a pool, the
// cache dir or a secret straight off the disk, and says which and how
// to close it; with them closed it starts.
func TestJobsBoxRefusesReadableData(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(pool, cacheDir, token string) (string, error)
	}{
		{"a pool made with mkdir under umask 022", func(pool, _, _ string) (string, error) {
			return pool, os.Chmod(pool, 0o755)
		}},
		{"a cache dir others may enter", func(_, cacheDir, _ string) (string, error) {
			return cacheDir, os.Chmod(cacheDir, 0o711)
		}},
		{"a token file readable by all", func(_, _, token string) (string, error) {
			return token, os.Chmod(token, 0o644)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, pool, cacheDir, token := jobsBoxConfig(t)
			open, err := c.open(pool, cacheDir, token)
			if err != nil {
				t.Fatal(err)
			}
			b, err := New(cfg, nil)
			if err == nil {
				b.Close()
				t.Fatalf("a jobs box started with %s readable by %s", open, jobsSlot)
			}
			for _, want := range []string{open, jobsSlot, "chmod o-rwx " + open} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not say %q: %v", want, err)
				}
			}
			if ps := cfg.Validate(); len(ps) != 1 || !strings.Contains(ps[0].Msg, "chmod o-rwx "+open) {
				t.Errorf("config check: %v, want the one problem", ps)
			}
		})
	}
	t.Run("a token in the state dir, the box's alone", func(t *testing.T) {
		cfg, _, _, _ := jobsBoxConfig(t)
		cfg.Jobs.StageTokenFile = filepath.Join(cfg.Server.StateDir, "stage.token")
		if err := os.WriteFile(cfg.Jobs.StageTokenFile, []byte("a-token\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := New(cfg, nil)
		if err != nil {
			t.Fatalf("a jobs box with a token in its state dir: %v", err)
		}
		b.Close()
	})
	t.Run("all closed", func(t *testing.T) {
		cfg, _, _, _ := jobsBoxConfig(t)
		b, err := New(cfg, nil)
		if err != nil {
			t.Fatalf("a jobs box with its data closed to slot users: %v", err)
		}
		b.Close()
	})
}
