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
	"strings"
	"time"

	"sitebox/internal/cache/upstream"
	"sitebox/internal/cksum"
	"sitebox/internal/problem"
)

// DefaultBlockSize is 1 MiB: the fetch unit of sequential readers (and of
// read-ahead), where larger blocks need fewer upstream requests; keeping
// ReadAhead blocks in flight fills a 10 ms × 150 MB/s link (1.5 MB in
// flight) with a few requests per stream. Scattered reads do not pay for
// it: they fetch and cache the 32 KiB pages they touch (see File.ReadAt),
// so the block size no longer trades streaming speed for sparse reads.
const DefaultBlockSize = 1 << 20

// Config configures a Cache: the [cache] settings as the file gave them
// (New fills in defaults and checks their ranges as Validate does), and
// what the box adds that is not a file setting.
type Config struct {
	Settings
	// Routes are Settings.Routes with their upstreams dialed, longest
	// prefix first; the cache reads these, not the URLs.
	Routes []Route
	// Checksums are the algorithms the cache answers checksum requests
	// for (asking its upstream); the zero value offers adler32 and crc32c.
	Checksums cksum.Offered
	// FetchTimeout bounds one upstream block fetch before it is retried on
	// the next upstream (default 60 s).
	FetchTimeout time.Duration
	// DiskRetry is how long the cache serves uncached after a disk error
	// before it tries to write again (default 30 s).
	DiskRetry time.Duration
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

// prepare fills in defaults and checks what New needs.
func (c *Config) prepare() error {
	if c.Dir == "" {
		return errors.New("cache: no directory configured")
	}
	c.Settings.fill()
	var l problem.List
	l.Section = "cache"
	c.Settings.checkValues(l.Add)
	if len(l.All) > 0 {
		msgs := make([]string, len(l.All))
		for i, p := range l.All {
			msgs[i] = p.String()
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = 60 * time.Second
	}
	if c.DiskRetry <= 0 {
		c.DiskRetry = 30 * time.Second
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
