package cache

import (
	"fmt"
	"net/url"
	"time"

	"sitebox/internal/remote"
	"sitebox/internal/units"
)

// Settings configures the caching proxy role ([cache] in the config
// file), decoded straight into these fields: reads below each route's
// prefix are served from local disk, fetched from the route's upstreams
// on a miss. Defaults fills what is unset and Validate says what is
// wrong; New takes them as they are (see Config). A zero size or
// duration is unset; the tag nonzero has the config's type check refuse
// one written as 0 in the file.
type Settings struct {
	// Dir holds cached data and block maps (required when routes are set).
	Dir string `toml:"dir"`
	// RAM bounds block buffers in flight, waiting for the disk and kept
	// for the stream they were fetched ahead of (default "1GiB"). When it
	// is used up, reads go to the upstream uncached rather than wait.
	RAM units.Size `toml:"ram" nonzero:""`
	// BlockSize is the caching unit for sequential readers (default
	// "1MiB", DefaultBlockSize; a power of two from 64KiB to 64MiB);
	// scattered reads fetch 32 KiB pages of it (blockmap.CheckPage).
	BlockSize units.Size `toml:"block_size" nonzero:""`
	// ReadAhead is blocks fetched ahead of sequential readers (default
	// 8 MiB worth, at least 8; -1 disables).
	ReadAhead int `toml:"read_ahead"`
	// Prefetch fetches whole files once opened.
	Prefetch bool `toml:"prefetch"`
	// PageCache writes through the kernel page cache instead of O_DIRECT
	// (used anyway where the filesystem lacks O_DIRECT, e.g. tmpfs, and
	// for blocks under 1 MiB); reads always go through the page cache.
	PageCache bool `toml:"page_cache"`
	// Revalidate is how long a cached copy is trusted before an open checks
	// the upstream's size and mtime (default "10m").
	Revalidate units.Duration `toml:"revalidate" nonzero:""`
	// Streams is connections per root:// upstream, so the cache is not
	// held to one TCP window per RTT (default 16; idle streams never
	// connect).
	Streams int `toml:"streams"`
	// UpstreamIdle is how long a file's upstream handles stay open after
	// its last client closed it (default "5s"); UpstreamFiles caps the
	// files open at each upstream (default 512), closing the least
	// recently used idle ones first (see idleHandles).
	UpstreamIdle  units.Duration `toml:"upstream_idle" nonzero:""`
	UpstreamFiles int            `toml:"upstream_files"`
	// Watermarks start a purge; PurgeInterval is how often usage is
	// checked against them (default "10s"; a fast fill also triggers a
	// check).
	Watermarks
	PurgeInterval units.Duration `toml:"purge_interval" nonzero:""`
	// UpstreamCA is a PEM CA file for https:// upstreams with private
	// certificates; UpstreamInsecure skips verification (tests only).
	UpstreamCA       string `toml:"upstream_ca"`
	UpstreamInsecure bool   `toml:"upstream_insecure"`
	// UpstreamTokenFile holds the bearer token the cache presents to its
	// upstreams (its own credentials, never a client's): over https://,
	// and with ztn over roots://.
	UpstreamTokenFile string `toml:"upstream_token_file"`
	// UpstreamProxyFile is the X.509 proxy the cache presents to its
	// upstreams that ask for one (gsi on root:// and roots://, a client
	// certificate on https://): a robot or service proxy, as XCache's,
	// read again when renewed on disk. Checked by the box's config
	// (config.GridProxies), which the cache does not read.
	UpstreamProxyFile string `toml:"upstream_proxy_file"`
	// TrustedRedirects are the hosts besides the configured upstreams
	// that an upstream may redirect the cache to: "host:port", "host"
	// (any port) or "*.example.org". A cache in front of a director lists
	// the director's data servers here. Redirects elsewhere are refused,
	// so an upstream cannot send the cache's token, or its fetches, to a
	// host nobody chose. Default: none (only the upstreams themselves).
	TrustedRedirects []string     `toml:"trusted_redirects"`
	Routes           []RouteEntry `toml:"route"`
}

// Watermarks start a purge when usage passes a high mark (of bytes or of
// files) and purge least recently used, unopened files until both are
// under their low marks. A level is "90%" of the cache filesystem's size
// or inodes, as XCache's diskusage, or an absolute amount used by the
// cache itself ("500GiB", a number of files). Defaults 90% and 80%.
type Watermarks struct {
	HighWater      ByteLevel `toml:"high_water"`
	LowWater       ByteLevel `toml:"low_water"`
	FilesHighWater FileLevel `toml:"files_high_water"`
	FilesLowWater  FileLevel `toml:"files_low_water"`
}

// RouteEntry is a cached namespace prefix and its upstreams, tried in
// order ([[cache.route]]).
type RouteEntry struct {
	Prefix    string   `toml:"prefix"`
	Upstreams []string `toml:"upstreams"` // root://host:port or https://host:port URLs
}

// Enabled reports whether the cache role is configured.
func (c *Settings) Enabled() bool { return len(c.Routes) > 0 }

// Defaults fills unset fields with their documented defaults, when the
// role is configured at all.
func (c *Settings) Defaults() {
	if c.Enabled() {
		c.fill()
	}
}

// fill sets every unset field to its default: the one place they are
// written down, for the file's settings and for a Cache made by New.
func (c *Settings) fill() {
	if c.RAM == 0 {
		c.RAM = 1 << 30
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.ReadAhead == 0 && c.BlockSize > 0 {
		c.ReadAhead = int(max(8, (8<<20)/c.BlockSize))
	}
	def := func(d *units.Duration, v time.Duration) {
		if *d == 0 {
			*d = units.Duration(v)
		}
	}
	def(&c.Revalidate, 10*time.Minute)
	def(&c.UpstreamIdle, 5*time.Second)
	def(&c.PurgeInterval, 10*time.Second)
	if c.Streams == 0 {
		c.Streams = 16
	}
	if c.UpstreamFiles == 0 {
		c.UpstreamFiles = 512
	}
	w := &c.Watermarks
	if w.HighWater == 0 {
		w.HighWater = 0.90
	}
	if w.LowWater == 0 {
		w.LowWater = 0.80
	}
	if w.FilesHighWater == 0 {
		w.FilesHighWater = 0.90
	}
	if w.FilesLowWater == 0 {
		w.FilesLowWater = 0.80
	}
}

// encrypted reports whether a valid upstream URL is reached over TLS.
func encrypted(s string) bool {
	u, err := url.Parse(s)
	return err == nil && remote.Encrypted(u.Scheme)
}

// CheckUpstreamURL explains what is wrong with an upstream URL, or "".
func CheckUpstreamURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("%q is not a URL: %v", s, err)
	}
	if !remote.Supported(u.Scheme) {
		return fmt.Sprintf("%q: upstream must be a URL like root://host:port; schemes: %s", s, remote.SchemeList())
	}
	if u.Host == "" || u.Port() == "" {
		return fmt.Sprintf("%q: give host and port, e.g. root://origin.example.org:1094", s)
	}
	return ""
}
