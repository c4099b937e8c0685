package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/admin"
	"sitebox/internal/cache"
	"sitebox/internal/metrics"
	"sitebox/internal/store"
)

var lastAccess = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeCache answers like the real cache: ErrNotFound when nothing is
// cached below the path, ErrBusy when a file there is open.
type fakeCache struct {
	mu      sync.Mutex
	entries []cache.EntryInfo
}

func (f *fakeCache) Stats() cache.Stats {
	return cache.Stats{
		HitBytes: 700, RAMHitBytes: 300, MissBytes: 200, BypassBytes: 100, HitRequests: 7, MissRequests: 2,
		UpstreamBytes: 350, UpstreamErrors: 1, UsedBytes: 190, Files: 3, OpenFiles: 1,
		RAMInUse: 64 << 20, RAMKept: 16 << 20, RAMLimit: 1 << 30, DiskTotal: 100 << 30, DiskFree: 40 << 30,
		InodesTotal: 1000, InodesFree: 900, DiskError: "write data/x: input/output error",
	}
}

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
	var kept []cache.EntryInfo
	found, busy := 0, 0
	for _, e := range f.entries {
		if !store.HasPrefix(e.Path, p) {
			kept = append(kept, e)
			continue
		}
		found++
		if e.Open > 0 {
			busy++
			kept = append(kept, e)
		}
	}
	f.entries = kept
	switch {
	case found == 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: nothing cached there", store.ErrNotFound)}
	case busy > 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: %d of %d cached files are open and were kept", store.ErrBusy, busy, found)}
	}
	return nil
}

// startAdmin serves a fake cache on the admin socket of a new state dir.
func startAdmin(t *testing.T) string {
	t.Helper()
	f := &fakeCache{entries: []cache.EntryInfo{
		{Path: "/pub/c.root", Size: 10 << 20, CachedBytes: 10 << 20, Blocks: 10, Present: 10, LastAccess: lastAccess},
		{Path: "/store/a.root", Size: 100, CachedBytes: 60, Blocks: 4, Present: 3, LastAccess: lastAccess},
		{Path: "/store/b.root", Size: 200, CachedBytes: 120, Blocks: 4, Present: 2, Open: 2},
	}}
	dir := t.TempDir()
	reg := metrics.NewRegistry()
	reg.MustRegister(metrics.NewCacheCollector(f.Stats))
	s := admin.New(reg, f, nil)
	ln, err := s.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return dir
}

func runCLI(args ...string) (string, error) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestCacheCommands(t *testing.T) {
	at := lastAccess.Local().Format("2006-01-02 15:04")
	tests := []struct {
		name    string
		args    []string
		want    []string // in the output
		notWant []string
		err     string // in the error, if one is expected
	}{
		{name: "ls", args: []string{"ls"}, want: []string{
			"PATH           SIZE      CACHED    %     LAST ACCESS       OPEN",
			"/pub/c.root    10.0 MiB  10.0 MiB  100%  " + at + "  0",
			"/store/a.root  100 B     60 B      60%   " + at + "  0",
			"/store/b.root  200 B     120 B     60%   -                 2",
			"3 files, 10.0 MiB cached of 10.0 MiB (99%)",
		}},
		{name: "ls prefix", args: []string{"ls", "/store/"}, want: []string{"/store/a.root", "/store/b.root", "2 files, 180 B cached of 300 B (60%)"}, notWant: []string{"/pub"}},
		{name: "ls limit", args: []string{"ls", "--limit", "2"}, want: []string{"/pub/c.root", "/store/a.root", "2 files,", "more cached files follow; list them with --after /store/a.root"}, notWant: []string{"/store/b.root"}},
		{name: "ls after", args: []string{"ls", "--after", "/store/a.root"}, want: []string{"/store/b.root", "1 file,"}, notWant: []string{"/pub", "/store/a.root", "more cached"}},
		{name: "ls limit exact", args: []string{"ls", "/store", "--limit", "2"}, want: []string{"2 files,"}, notWant: []string{"more cached"}},
		{name: "ls bad limit", args: []string{"ls", "--limit", "-1"}, err: "--limit -1"},
		{name: "ls bad after", args: []string{"ls", "--after", "x/../y"}, err: "not a path from a listing"},
		{name: "ls empty", args: []string{"ls", "/nothing"}, want: []string{"nothing cached at or below /nothing"}},
		{name: "ls bad prefix", args: []string{"ls", "/a/../b"}, err: "'..' is not allowed"},
		{name: "stats", args: []string{"stats"}, want: []string{
			"Served:      1000 B (hit 700 B, 300 B of it from RAM; miss 200 B, bypass 100 B)",
			"Hit ratio:   70.0% of bytes, 77.8% of block lookups (7 hit, 2 miss)",
			"Upstream:    350 B read, 1 error",
			"Cached:      190 B in 3 files (1 open)",
			"RAM:         64.0 MiB in use of 1.0 GiB (16.0 MiB kept for their readers)",
			"Disk:        40.0 GiB free of 100.0 GiB (60.0% used); 900 of 1000 inodes free",
			"Disk health: FAILING, serving uncached: write data/x: input/output error",
		}},
		{name: "evict file", args: []string{"evict", "/store/a.root"}, want: []string{"evicted /store/a.root: 1 file, 60 B freed", "  /store/a.root  60 B"}},
		{name: "evict dir", args: []string{"evict", "/pub"}, want: []string{"evicted /pub: 1 file, 10.0 MiB freed", "/pub/c.root"}},
		{name: "evict nothing", args: []string{"evict", "/store/zz"}, err: "evict /store/zz: file does not exist: nothing cached there"},
		{name: "evict open", args: []string{"evict", "/store"}, err: "1 of 2 cached files are open and were kept"},
		{name: "evict bad", args: []string{"evict", "store/../x"}, err: "'..' is not allowed"},
		{name: "evict no arg", args: []string{"evict"}, err: "accepts 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := startAdmin(t)
			out, err := runCLI(append([]string{"cache", "--state-dir", dir}, tt.args...)...)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestCacheCommandsJSON(t *testing.T) {
	dir := startAdmin(t)
	out, err := runCLI("cache", "stats", "--json", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var s cache.Stats
	if err := json.Unmarshal([]byte(out), &s); err != nil || !reflect.DeepEqual(s, (&fakeCache{}).Stats()) {
		t.Errorf("stats --json: %v\n%s", err, out)
	}
	out, err = runCLI("cache", "ls", "/store", "--json", "--state-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	var es []cache.EntryInfo
	if err := json.Unmarshal([]byte(out), &es); err != nil || len(es) != 2 || es[1].Open != 2 || !es[0].LastAccess.Equal(lastAccess) {
		t.Errorf("ls --json: %v\n%s", err, out)
	}
	out, err = runCLI("cache", "evict", "/pub", "--json", "--state-dir", dir)
	var r admin.EvictResult
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.Path != "/pub" || r.Bytes != 10<<20 || len(r.Files) != 1 {
		t.Errorf("evict --json: %v\n%s", err, out)
	}
}

// TestCacheSocketFromConfig: the socket is found through [server]
// state_dir, even when the file has problems unrelated to it.
func TestCacheSocketFromConfig(t *testing.T) {
	dir := startAdmin(t)
	cfgFile := filepath.Join(t.TempDir(), "site.toml")
	os.WriteFile(cfgFile, []byte(fmt.Sprintf(`
[server]
state_dir = %q
[[export]]
prefix = "/store"
pools = ["/no/such/pool"]
`, dir)), 0o644)
	out, err := runCLI("cache", "stats", "-c", cfgFile)
	if err != nil || !strings.Contains(out, "Hit ratio:") {
		t.Fatalf("stats via --config: %v\n%s", err, out)
	}

	// --state-dir wins over the file.
	other := t.TempDir()
	_, err = runCLI("cache", "ls", "-c", cfgFile, "--state-dir", other)
	want := "no sitebox running with state dir " + other + " (no admin socket at " + filepath.Join(other, "admin.sock") + ")"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}

	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[server\n"), 0o644)
	if _, err := runCLI("cache", "stats", "-c", bad); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Errorf("unparsable config: %v", err)
	}
}

func TestCacheDefaultStateDir(t *testing.T) {
	f := &adminFlags{}
	cmd := newRootCmd()
	f.add(cmd)
	got, err := f.resolveStateDir(cmd)
	want := "./sitebox-state"
	if os.Geteuid() == 0 {
		want = "/var/lib/sitebox"
	}
	if err != nil || got != want {
		t.Errorf("default state dir %q (%v), want %q as serve uses", got, err, want)
	}
}
