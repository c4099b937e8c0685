// Package cache is the caching proxy: a store.Store in front of remote
// stores that keeps the blocks clients read on local disk, so the WAN
// carries each byte once.
//
// Files are cached in fixed-size blocks into sparse data files, each with
// a block map (which blocks are present, a CRC32C per block). A miss is
// answered from the upstream bytes as they arrive; writing them to disk
// happens behind, within a RAM budget, and is dropped rather than waited
// for when the disk falls behind. Any number of readers wanting the same
// block share one upstream fetch.
package cache

import (
	"errors"
	"fmt"
	"time"

	"sitebox/internal/cache/upstream"
	"sitebox/internal/cksum"
)

// DefaultBlockSize is 1 MiB: the fetch unit of sequential readers (and of
// read-ahead), where larger blocks need fewer upstream requests; keeping
// ReadAhead blocks in flight fills a 10 ms × 150 MB/s link (1.5 MB in
// flight) with a few requests per stream. Scattered reads do not pay for
// it: they fetch and cache the 32 KiB pages they touch (see File.ReadAt),
// so the block size no longer trades streaming speed for sparse reads.
const DefaultBlockSize = 1 << 20

// Config configures a Cache.
type Config struct {
	// Dir holds the cached data and block maps. It is created if missing.
	Dir string
	// Routes map namespace prefixes to upstreams, longest prefix first.
	Routes []Route
	// Checksums are the algorithms the cache answers checksum requests
	// for (asking its upstream); the zero value offers adler32 and crc32c.
	Checksums cksum.Offered
	// BlockSize is the unit of caching for sequential readers (default
	// DefaultBlockSize; a power of two from 64 KiB to 64 MiB); scattered
	// reads fetch 32 KiB pages of it (blockmap.CheckPage).
	BlockSize int64
	// RAM bounds the memory of block buffers: fetches in flight, blocks
	// waiting to be written, and blocks written but kept for the stream
	// they were fetched ahead of (at most a quarter, keep.go) (default 1
	// GiB). When it is used up, reads go to the upstream uncached rather
	// than wait.
	RAM int64
	// ReadAhead is how many blocks are fetched ahead of a sequential reader
	// (default 8 MiB worth, at least 8 blocks; 0 uses the default,
	// negative disables).
	ReadAhead int
	// Prefetch fetches whole files in the background once opened.
	Prefetch bool
	// PageCache writes cached data through the kernel's page cache. By
	// default the cache writes blocks of 1 MiB and more with O_DIRECT
	// where the filesystem supports it (see directio.go); reads always go
	// through the page cache (disk.Data).
	PageCache bool
	// Revalidate is how long a cached copy is trusted before the next open
	// checks the upstream's size and mtime (default 10 minutes).
	Revalidate time.Duration
	// Streams is the number of connections kept to each root:// upstream,
	// so the cache is not held to one TCP window per RTT (default 16;
	// idle streams never connect).
	Streams int
	// FetchTimeout bounds one upstream block fetch before it is retried on
	// the next upstream (default 60 s).
	FetchTimeout time.Duration
	// UpstreamIdle is how long a file's upstream handles stay open after
	// its last client closed it, ready for a reopen (default 5 s).
	UpstreamIdle time.Duration
	// UpstreamFiles caps the files open at each upstream (default 512):
	// past it, the handles of the least recently used files no client
	// holds are closed at once. See idleHandles.
	UpstreamFiles int
	// DiskRetry is how long the cache serves uncached after a disk error
	// before it tries to write again (default 30 s).
	DiskRetry time.Duration
	// Space watermarks; see Watermarks.
	Space Watermarks
	// Private says the upstreams are read with the cache's own token, so
	// what it fetches may be protected at the origin: then the cache
	// serves only paths below Ruled, the prefixes an access rule governs
	// in front of it ([[auth.namespace]]), and refuses every other path,
	// since it cannot know whether the origin would give it to the client
	// asking. A cache filling anonymously serves anyone: the origin gave
	// those bytes to anyone.
	Private bool
	Ruled   []string
}

// Watermarks start a purge when usage passes High (of bytes or of files)
// and purge least recently used, unopened files until both are under Low.
// A fraction (0 < f ≤ 1) is of the cache filesystem's size or inodes, as
// XCache's diskusage; a value above 1 is an absolute number of bytes or
// files used by the cache itself.
type Watermarks struct {
	BytesHigh, BytesLow float64 // default 0.90, 0.80
	FilesHigh, FilesLow float64 // default 0.90, 0.80
	// Interval between usage checks (default 10 s; writes also trigger one
	// when they may have crossed the mark).
	Interval time.Duration
}

// Route is a cached namespace prefix and its upstreams, tried in order.
type Route struct {
	Prefix    string
	Upstreams []Upstream
}

// Upstream is one remote server of a route: its name, where the route's
// prefix maps to there, and its clients (see upstream.Config).
type Upstream = upstream.Config

// DialOptions are what upstream clients need besides the URL (see
// upstream.DialOptions).
type DialOptions = upstream.DialOptions

// NewUpstream makes the clients for an upstream URL (see upstream.Dial).
func NewUpstream(rawURL string, opts DialOptions) (Upstream, error) {
	return upstream.Dial(rawURL, opts)
}

func (c *Config) defaults() error {
	if c.Dir == "" {
		return errors.New("cache: no directory configured")
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.BlockSize < 64<<10 || c.BlockSize > 64<<20 || c.BlockSize&(c.BlockSize-1) != 0 {
		return fmt.Errorf("cache: block size %d must be a power of two from 64 KiB to 64 MiB", c.BlockSize)
	}
	if c.RAM == 0 {
		c.RAM = 1 << 30
	}
	if c.RAM < 4*c.BlockSize {
		return fmt.Errorf("cache: RAM budget %d is less than 4 blocks of %d", c.RAM, c.BlockSize)
	}
	if c.ReadAhead == 0 {
		c.ReadAhead = int(max(8, (8<<20)/c.BlockSize))
	}
	if c.Revalidate == 0 {
		c.Revalidate = 10 * time.Minute
	}
	if c.Streams <= 0 {
		c.Streams = 16
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 60 * time.Second
	}
	if c.UpstreamIdle <= 0 {
		c.UpstreamIdle = 5 * time.Second
	}
	if c.UpstreamFiles <= 0 {
		c.UpstreamFiles = 512
	}
	if c.DiskRetry <= 0 {
		c.DiskRetry = 30 * time.Second
	}
	w := &c.Space
	if w.BytesHigh == 0 && w.BytesLow == 0 {
		w.BytesHigh, w.BytesLow = 0.90, 0.80
	}
	if w.FilesHigh == 0 && w.FilesLow == 0 {
		w.FilesHigh, w.FilesLow = 0.90, 0.80
	}
	if w.BytesLow >= w.BytesHigh || w.FilesLow >= w.FilesHigh || w.BytesLow <= 0 || w.FilesLow <= 0 {
		return fmt.Errorf("cache: watermarks must satisfy 0 < low < high (bytes %v/%v, files %v/%v)", w.BytesLow, w.BytesHigh, w.FilesLow, w.FilesHigh)
	}
	if w.Interval <= 0 {
		w.Interval = 10 * time.Second
	}
	if len(c.Routes) == 0 {
		return errors.New("cache: no upstreams configured")
	}
	for _, r := range c.Routes {
		if len(r.Upstreams) == 0 {
			return fmt.Errorf("cache: prefix %s has no upstream", r.Prefix)
		}
		for _, u := range r.Upstreams {
			if len(u.Streams) == 0 {
				return fmt.Errorf("cache: upstream %s of %s has no client", u.Name, r.Prefix)
			}
		}
	}
	return nil
}
