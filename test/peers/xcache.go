package peers

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// XcacheConfig describes a real XCache: xrootd as a proxy (libXrdPss) with
// the proxy file cache (libXrdPfc) in front of one origin.
type XcacheConfig struct {
	Origin   string // host:port of the data server it caches (pss.origin)
	Port     int    // root:// port on 127.0.0.1
	Name     string // instance name (-n), keeps logs and admin paths apart
	WorkDir  string // config, logs, admin files
	CacheDir string // cached data and .cinfo files (oss.localroot)
	// RAM for blocks in memory (pfc.ram; default and minimum 1 GiB, since
	// XCache 5.5.3 refuses less).
	RAM int64
	// BlockSize is pfc.blocksize (0: XCache's default, 128 KiB in 5.5.3).
	BlockSize int64
	// Prefetch is pfc.prefetch, blocks read ahead per file (0: XCache's
	// default; negative disables).
	Prefetch int
	// DiskLow and DiskHigh are pfc.diskusage's watermarks: a fraction of
	// the cache filesystem (≤ 1) or bytes used (> 1). Zero: 0.90 and 0.95.
	DiskLow, DiskHigh float64
	Extra             []string // further config lines
}

// StartXcache runs XCache as user xrootd in the foreground, like
// StartXrootd, with its cache in CacheDir.
func StartXcache(ctx context.Context, c XcacheConfig) (*Process, error) {
	if c.Origin == "" {
		return nil, fmt.Errorf("xcache: no origin")
	}
	if c.CacheDir == "" {
		return nil, fmt.Errorf("xcache: no cache directory")
	}
	if c.RAM == 0 {
		c.RAM = 1 << 30
	}
	if c.RAM < 1<<30 {
		return nil, fmt.Errorf("xcache: RAM %d bytes is below the 1 GiB XCache 5.5 accepts", c.RAM)
	}
	if c.DiskLow == 0 && c.DiskHigh == 0 {
		c.DiskLow, c.DiskHigh = 0.90, 0.95
	}
	if c.DiskLow >= c.DiskHigh {
		return nil, fmt.Errorf("xcache: disk watermarks low %g ≥ high %g", c.DiskLow, c.DiskHigh)
	}
	if c.Name == "" {
		c.Name = "sitebox-xcache"
	}
	if err := os.MkdirAll(c.CacheDir, 0o755); err != nil {
		return nil, err
	}
	lines := []string{
		"ofs.osslib libXrdPss.so",
		"pss.origin " + c.Origin,
		"pss.cachelib libXrdPfc.so",
		"pfc.ram " + xrdSize(c.RAM),
		"pfc.diskusage " + xrdLevel(c.DiskLow) + " " + xrdLevel(c.DiskHigh),
	}
	if c.BlockSize > 0 {
		lines = append(lines, "pfc.blocksize "+xrdSize(c.BlockSize))
	}
	switch {
	case c.Prefetch > 0:
		lines = append(lines, "pfc.prefetch "+strconv.Itoa(c.Prefetch))
	case c.Prefetch < 0:
		lines = append(lines, "pfc.prefetch 0")
	}
	return StartXrootd(ctx, XrootdConfig{
		DataDir: c.CacheDir, Port: c.Port, Name: c.Name, WorkDir: c.WorkDir,
		Extra: append(lines, c.Extra...),
	})
}

// xrdSize writes bytes with XRootD's binary suffixes (k, m, g).
func xrdSize(n int64) string {
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"g", 30}, {"m", 20}, {"k", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// xrdLevel writes a watermark as pfc.diskusage reads it: a bare number is
// a fraction of the filesystem, one with a suffix is a size. Sizes are
// rounded up to KiB since XCache reads a suffix-less number as a fraction.
func xrdLevel(v float64) string {
	if v <= 1 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	n := (int64(v) + 1023) &^ 1023
	return xrdSize(n)
}
