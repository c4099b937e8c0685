package box

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/cache"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

func reloadTestConfig(t *testing.T, pool, cacheDir, state string) *config.Config {
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/local", Pools: []string{pool}}},
		Cache: cache.Settings{Dir: cacheDir, Routes: []cache.RouteEntry{
			{Prefix: "/remote", Upstreams: []string{"root://127.0.0.1:1"}},
		}},
		Server: config.Server{StateDir: state},
		Root:   xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:  webdav.Settings{Addr: config.Off},
	}
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	return cfg
}

// A reload applies what can change live and refuses, naming the keys,
// what needs a restart, leaving the running settings as they were.
func TestReload(t *testing.T) {
	pool, cacheDir, state := t.TempDir(), t.TempDir(), t.TempDir()
	b, err := New(reloadTestConfig(t, pool, cacheDir, state), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fresh := func(edit func(c *config.Config)) *config.Config {
		c := reloadTestConfig(t, pool, cacheDir, state)
		edit(c)
		return c
	}

	t.Run("nothing changed", func(t *testing.T) {
		changed, err := b.Reload(fresh(func(*config.Config) {}))
		if err != nil || len(changed) != 0 {
			t.Fatalf("Reload = %v, %v; want no change", changed, err)
		}
	})
	t.Run("live: log level, access log, watermarks", func(t *testing.T) {
		logFile := filepath.Join(t.TempDir(), "access.log")
		changed, err := b.Reload(fresh(func(c *config.Config) {
			c.Server.LogLevel = "debug"
			c.Server.AccessLog = logFile
			c.Cache.HighWater, c.Cache.LowWater = 0.5, 0.4
		}))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(changed, " "); got != "cache.high_water cache.low_water server.access_log server.log_level" {
			t.Errorf("changed %q", got)
		}
		b.access.Transfer(accesslog.Entry{Proto: "root", Path: "/local/x", Bytes: 7})
		if data, _ := os.ReadFile(logFile); !strings.Contains(string(data), "/local/x") {
			t.Errorf("the access log switched on by the reload has %q", data)
		}
		b.cache.Stats() // the cache still answers
	})
	t.Run("restart needed", func(t *testing.T) {
		_, err := b.Reload(fresh(func(c *config.Config) {
			c.Root.Addr = "127.0.0.1:1"
			c.Exports = append(c.Exports, origin.Export{Prefix: "/more", Pools: []string{pool}})
			c.Server.LogLevel = "warn"
		}))
		if !errors.Is(err, ErrNeedsRestart) || !strings.Contains(err.Error(), "root.addr") || !strings.Contains(err.Error(), "export[2]") {
			t.Fatalf("Reload err = %v; want ErrNeedsRestart naming root.addr and export[2]", err)
		}
		if b.current.Server.LogLevel != "debug" {
			t.Error("a refused reload changed the settings in force")
		}
	})
	t.Run("turning tokens on", func(t *testing.T) {
		_, err := b.Reload(fresh(func(c *config.Config) {
			c.Auth.Issuers = append(c.Auth.Issuers, c.Auth.Issuers...)
			c.Auth.SiteIssuer = true
		}))
		if !errors.Is(err, ErrNeedsRestart) {
			t.Fatalf("Reload err = %v; want ErrNeedsRestart", err)
		}
	})
}

// A reload that changes the trusted issuers swaps the verifier: tokens
// of a removed issuer are refused from then on, with the reason.
func TestReloadIssuers(t *testing.T) {
	conf := func(issuers ...string) *config.Config {
		cfg := &config.Config{
			Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
			Server:  config.Server{StateDir: t.TempDir()},
			Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
			HTTPS:   webdav.Settings{Addr: config.Off},
		}
		for _, u := range issuers {
			cfg.Auth.Issuers = append(cfg.Auth.Issuers, auth.IssuerEntry{URL: u})
		}
		cfg.ApplyDefaults("test", false)
		return cfg
	}
	first := conf("https://127.0.0.1:1", "https://127.0.0.1:2")
	b, err := New(first, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	before := b.tokens.cur.Load()
	next := conf("https://127.0.0.1:1")
	next.Exports, next.Server.StateDir = first.Exports, first.Server.StateDir
	changed, err := b.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(changed, " ") != "auth.issuer[2]" {
		t.Errorf("changed %v", changed)
	}
	if b.tokens.cur.Load() == before {
		t.Fatal("the verifier was not swapped")
	}
	// A token naming the removed issuer is now from an unknown issuer.
	_, err = b.tokens.Verify(context.Background(), "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovLzEyNy4wLjAuMToyIn0.c2ln")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:2") {
		t.Errorf("Verify = %v; want a refusal naming the issuer no longer trusted", err)
	}
}
