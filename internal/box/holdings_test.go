package box

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/origin"
	"sitebox/internal/units"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// A site box's origin joins its director with a holdings filter of what
// its exports hold, so the director can ask it first for those names.
func TestOriginAdvertisesHoldings(t *testing.T) {
	pool := t.TempDir()
	if err := os.MkdirAll(filepath.Join(pool, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pool, "a", "b.dat"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Director: director.Settings{Enabled: true, RootAddr: "127.0.0.1:0"},
		Exports:  []origin.Export{{Prefix: "/store", Pools: []string{pool}}},
		Server:   config.Server{StateDir: t.TempDir()},
		Root:     xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:    webdav.Settings{Addr: config.Off},
	}
	// The first ad may go before the first walk ends: the next carries it.
	cfg.Advertise.Interval = units.Duration(200 * time.Millisecond)
	b := runBox(t, cfg)
	want := director.NewHoldings([]string{"/store", "/store/a", "/store/a/b.dat"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got *director.Holdings
		for _, s := range b.director.AdvertisedServers() {
			if s.Role == director.RoleOrigin {
				got = s.Holdings
			}
		}
		if got != nil && got.Digest == want.Digest && len(got.Bits) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the origin's entry at its director has holdings %+v, want the filter of /store, /store/a, /store/a/b.dat (%d names)", got, want.Names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
