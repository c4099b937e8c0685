package doctor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sitebox/internal/config"
)

// limiter lets bytes through at rate per second across all writers, as
// a slow disk shared by parallel writes would.
type limiter struct {
	mu   sync.Mutex
	rate float64
	next time.Time
}

func (l *limiter) wait(n int) {
	l.mu.Lock()
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	l.next = l.next.Add(time.Duration(float64(n) / l.rate * float64(time.Second)))
	until := l.next
	l.mu.Unlock()
	time.Sleep(time.Until(until))
}

// slowFile is a real file whose writes are throttled by a limiter.
type slowFile struct {
	*os.File
	l *limiter
}

func (s slowFile) Write(p []byte) (int, error) {
	s.l.wait(len(p))
	return s.File.Write(p)
}

func TestDiskSpeedSlow(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Cache.Dir = t.TempDir()
	lim := &limiter{rate: 20e6}
	var opened []string
	var mu sync.Mutex
	o := Options{
		DiskFileSize: 8 << 20, DiskTime: 500 * time.Millisecond, Statfs: healthyFS,
		OpenWriter: func(path string) (io.WriteCloser, error) {
			mu.Lock()
			opened = append(opened, path)
			mu.Unlock()
			f, err := os.Create(path)
			return slowFile{f, lim}, err
		},
	}.withDefaults()
	cs := checkDiskSpeed(context.Background(), cfg, o)
	mustHave(t, cs[0], StatusWarn, "slower than the 1250 MB/s network: the cache would throttle transfers",
		"RAID controller", "stripe_cache_size", "ZFS", "sync=always", "mounted with sync", "network disk")
	var rate float64
	if _, err := fmt.Sscanf(cs[0].Summary, "the cache disk writes at %f MB/s", &rate); err != nil || rate < 15 || rate > 25 {
		t.Errorf("a 20 MB/s disk measured as: %s", cs[0].Summary)
	}
	t.Log(cs[0].Summary)
	if len(opened) != 4 {
		t.Errorf("opened %d files, want 4", len(opened))
	}
	assertNoTestFiles(t, cfg.Cache.Dir)
}

// TestDiskSpeedReal writes real files (O_DIRECT where the filesystem has
// it) against a slow network, so the disk passes.
func TestDiskSpeedReal(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Cache.Dir = t.TempDir()
	o := Options{DiskFileSize: 4 << 20, NetworkSpeed: 1e6}.withDefaults()
	cs := checkDiskSpeed(context.Background(), cfg, o)
	mustHave(t, cs[0], StatusOK, "faster than the 1 MB/s network", "16.0 MiB in 4 files")
	assertNoTestFiles(t, cfg.Cache.Dir)
}

func TestDiskSpeedCannotWrite(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	cfg.Cache.Dir = filepath.Join(t.TempDir(), "missing")
	cs := checkDiskSpeed(context.Background(), cfg, Options{Statfs: healthyFS, DiskFileSize: 1 << 20}.withDefaults())
	mustHave(t, cs[0], StatusError, "cannot write test files", "no such file")
}

func TestDiskSpeedSkips(t *testing.T) {
	cfg := baseConfig(t, config.Off, config.Off)
	mustHave(t, checkDiskSpeed(context.Background(), cfg, Options{}.withDefaults())[0], StatusSkip, "no [cache] dir")
	cfg.Cache.Dir = t.TempDir()
	full := func(string) (FSInfo, error) { return FSInfo{Total: 1 << 30, Avail: 100 << 20}, nil }
	mustHave(t, checkDiskSpeed(context.Background(), cfg, Options{Statfs: full}.withDefaults())[0], StatusSkip, "not tested")
}

func assertNoTestFiles(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".sitebox-doctor-*"))
	if len(left) > 0 {
		t.Errorf("test files left behind: %v", left)
	}
}

func TestParseNetworkSpeed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"10Gbit", 1250e6}, {"1Gbit", 125e6}, {"25Gbit", 3125e6}, {"100Mbit", 12.5e6},
		{"10Gb/s", 1250e6}, {"1Gbps", 125e6}, {"500MB/s", 500e6}, {"1GB/s", 1e9},
		{"100MiB/s", 100 << 20}, {" 40 Gbit ", 5e9},
	} {
		got, err := ParseNetworkSpeed(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseNetworkSpeed(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "fast", "10", "10G", "-1Gbit", "0MB/s"} {
		if _, err := ParseNetworkSpeed(bad); err == nil {
			t.Errorf("ParseNetworkSpeed(%q) accepted", bad)
		}
	}
}
