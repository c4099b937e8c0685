package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"sitebox/test/peers"
)

// CacheConfig describes the cache scale test: Files files behind a slow,
// distant upstream link, read by N parallel xrdcp clients directly and
// through each cache. Zero fields take the documented defaults.
type CacheConfig struct {
	Sitebox  string   // sitebox binary for the "sitebox" setup
	WorkDir  string   // scratch: origin files (kept for reuse) and caches
	Files    int      // default 100
	FileSize int64    // default 50 MB
	Clients  []int    // parallel clients per point (default 1, 2, 4, 10)
	Setups   []string // any of direct, sitebox, xcache (default all three)
	// Latency is added to each direction of the upstream link, so a round
	// trip is twice it (default 10 ms; negative: none).
	Latency time.Duration
	// Bandwidth limits each upstream TCP connection, in bytes per second
	// (default 150 MB/s; negative: unlimited).
	Bandwidth int64
	// ColdMax bounds the cold phase: no cold copy starts after it
	// (default 45 s).
	ColdMax time.Duration
	Warm    time.Duration // length of the warm phase (default 20 s)
	RAM     int64         // RAM limit of both caches (default 1 GiB; XCache's minimum)
	// Disk is both caches' high watermark in bytes, the low one 80 % of
	// it (default twice the data set, so nothing is purged).
	Disk int64
	// XcacheBlockSize and XcachePrefetch set pfc.blocksize and
	// pfc.prefetch (0: XCache's defaults, 128 KiB and 10 in 5.5.3).
	XcacheBlockSize int64
	XcachePrefetch  int
	// BlockSize sets the sitebox cache's block_size (0: its default).
	BlockSize int64
	// MetricsPath, when set (e.g. "/metrics"), starts the sitebox cache with
	// [server] metrics_addr and reads its hit ratio from this path (see
	// promHitRatio) instead of computing it from the relay's count.
	MetricsPath string
	Bin         time.Duration // time-series resolution (default 1 s)
	Seed        uint64        // file order and picks (default 1)
	Out         io.Writer     // progress lines
}

func (c *CacheConfig) applyDefaults() {
	if c.Files <= 0 {
		c.Files = 100
	}
	if c.FileSize <= 0 {
		c.FileSize = 50_000_000
	}
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 2, 4, 10}
	}
	if len(c.Setups) == 0 {
		c.Setups = []string{"direct", "sitebox", "xcache"}
	}
	if c.Latency == 0 {
		c.Latency = 10 * time.Millisecond
	}
	if c.Bandwidth == 0 {
		c.Bandwidth = 150_000_000
	}
	if c.ColdMax <= 0 {
		c.ColdMax = 45 * time.Second
	}
	if c.Warm <= 0 {
		c.Warm = 20 * time.Second
	}
	if c.RAM <= 0 {
		c.RAM = 1 << 30
	}
	if c.Disk <= 0 {
		c.Disk = 2 * int64(c.Files) * c.FileSize
		if c.Disk < 64<<20 {
			c.Disk = 64 << 20
		}
	}
	if c.Bin <= 0 {
		c.Bin = time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *CacheConfig) validate() error {
	for _, s := range c.Setups {
		switch s {
		case "direct", "sitebox", "xcache":
		default:
			return fmt.Errorf("unknown setup %q (want direct, sitebox or xcache)", s)
		}
	}
	for _, n := range c.Clients {
		if n <= 0 {
			return fmt.Errorf("client count %d: want at least 1", n)
		}
	}
	if c.RAM < 1<<30 && contains(c.Setups, "xcache") {
		return fmt.Errorf("RAM %d bytes: XCache 5.5 refuses less than 1 GiB, and both caches get the same", c.RAM)
	}
	if c.Bandwidth > 0 && c.Bandwidth < 1000 {
		return fmt.Errorf("bandwidth %d B/s: Toxiproxy's smallest rate is 1000 B/s", c.Bandwidth)
	}
	return nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// CacheReport is the whole run: the settings used and one point per setup
// and client count.
type CacheReport struct {
	Config CacheConfig
	Points []CachePoint
	// Congestion is the host's TCP congestion control (see LinkCongestion).
	Congestion string
}

// cacheEnv is what every point shares: the origin behind its shaped link.
type cacheEnv struct {
	cfg   *CacheConfig
	link  *peers.Link
	data  string   // the origin's directory
	names []string // file paths on the origin, "/file007.dat"
}

// Cache runs the scale test. The origin is a real xrootd serving
// cfg.Files random files, reached through Toxiproxy (latency and a
// per-connection bandwidth limit, like a WAN path to a distant site) and
// a byte-counting Relay. Every point starts a fresh, empty cache.
func Cache(ctx context.Context, cfg CacheConfig) (*CacheReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	for _, tool := range []string{"xrdcp", "xrootd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("bench cache needs %s (Debian packages xrootd-client, xrootd-server): %w", tool, err)
		}
	}
	env, stop, err := startWAN(ctx, &cfg, "file%03d.dat")
	if err != nil {
		return nil, err
	}
	defer stop()

	rep := &CacheReport{Config: cfg, Congestion: LinkCongestion()}
	for _, n := range cfg.Clients {
		for _, s := range cfg.Setups {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			p := env.point(ctx, s, n)
			rep.Points = append(rep.Points, p)
			if p.Err != "" {
				fmt.Fprintf(cfg.Out, "  %-7s clients=%-2d FAILED: %s\n", s, n, p.Err)
				continue
			}
			fmt.Fprintf(cfg.Out, "  %-7s clients=%-2d cold %7.1f MB/s (%d files, %.1fs)  warm %7.1f MB/s  upstream÷unique %.3f  RSS %s  CPU s/GB cold %.2f warm %.2f\n",
				s, n, p.Cold.MBps, p.FilesCold, p.Cold.Seconds, p.Warm.MBps, p.UpstreamPerUnique, rssText(p.PeakRSS), p.CPUPerGBCold, p.CPUPerGBWarm)
		}
	}
	return rep, nil
}

// startWAN writes cfg.Files files named after pattern into the work
// directory and serves them from a real xrootd behind Toxiproxy (latency
// and a per-connection bandwidth limit, like a WAN path to a distant
// site). stop ends both.
func startWAN(ctx context.Context, cfg *CacheConfig, pattern string) (env *cacheEnv, stop func(), err error) {
	tpBin, err := peers.ToxiproxyBinary()
	if err != nil {
		return nil, nil, err
	}
	data := filepath.Join(cfg.WorkDir, "origin-data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, nil, err
	}
	env = &cacheEnv{cfg: cfg, data: data}
	fmt.Fprintf(cfg.Out, "bench cache: writing %d files of %d bytes into %s\n", cfg.Files, cfg.FileSize, data)
	for i := range cfg.Files {
		name := fmt.Sprintf(pattern, i)
		if err := makeRandomFile(filepath.Join(data, name), cfg.FileSize, uint64(i)); err != nil {
			return nil, nil, err
		}
		env.names = append(env.names, "/"+name)
	}
	oport, err := peers.FreePort()
	if err != nil {
		return nil, nil, err
	}
	origin, err := peers.StartXrootd(ctx, peers.XrootdConfig{DataDir: data, Port: oport, Name: "benchcacheorigin", WorkDir: filepath.Join(cfg.WorkDir, "origin")})
	if err != nil {
		return nil, nil, fmt.Errorf("start origin xrootd: %w", err)
	}
	tp, err := peers.StartToxiproxy(ctx, tpBin)
	if err != nil {
		origin.Stop()
		return nil, nil, err
	}
	stop = func() { tp.Stop(); origin.Stop() }
	if env.link, err = tp.Proxy(ctx, "wan", "127.0.0.1:"+strconv.Itoa(oport)); err == nil && cfg.Latency > 0 {
		err = env.link.SetLatency(ctx, cfg.Latency)
	}
	if err == nil && cfg.Bandwidth > 0 {
		err = env.link.SetBandwidth(ctx, cfg.Bandwidth)
	}
	if err != nil {
		stop()
		return nil, nil, err
	}
	return env, stop, nil
}

// makeRandomFile writes size bytes of incompressible data, the same for a
// given seed, reusing a file already of that size (a rerun with the same
// --work-dir skips the writing).
func makeRandomFile(path string, size int64, seed uint64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return nil
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed+1)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.NewChaCha8(key), size); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
