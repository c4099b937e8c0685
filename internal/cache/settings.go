package cache

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/remote"
	"sitebox/internal/units"
)

// Settings configures the caching proxy role ([cache] in the config
// file; Config turns it into the runtime Config): reads below each route's prefix
// are served from local disk, fetched from the route's upstreams on a miss.
type Settings struct {
	// Dir holds cached data and block maps (required when routes are set).
	Dir string `toml:"dir"`
	// RAM bounds block buffers in flight, waiting for the disk and kept
	// for the stream they were fetched ahead of (default "1GiB").
	RAM string `toml:"ram"`
	// BlockSize is the caching unit (default "1MiB").
	BlockSize string `toml:"block_size"`
	// ReadAhead is blocks fetched ahead of sequential readers (default
	// 8 MiB worth, at least 8;
	// -1 disables).
	ReadAhead int `toml:"read_ahead"`
	// Prefetch fetches whole files once opened.
	Prefetch bool `toml:"prefetch"`
	// PageCache writes through the kernel page cache instead of O_DIRECT
	// (used anyway where the filesystem lacks O_DIRECT, e.g. tmpfs).
	PageCache bool `toml:"page_cache"`
	// Revalidate is how long a cached copy is trusted before an open checks
	// the upstream's size and mtime (default "10m").
	Revalidate string `toml:"revalidate"`
	// Streams is connections per root:// upstream (default 16).
	Streams int `toml:"streams"`
	// UpstreamIdle is how long a file's upstream handles stay open after
	// its last client closed it (default "5s"); UpstreamFiles caps the
	// files open at each upstream (default 512), closing the least
	// recently used idle ones first.
	UpstreamIdle  string `toml:"upstream_idle"`
	UpstreamFiles int    `toml:"upstream_files"`
	// HighWater/LowWater: bytes, as "90%" of the cache filesystem or an
	// absolute size used by the cache ("500GiB"). Defaults 90% and 80%.
	HighWater string `toml:"high_water"`
	LowWater  string `toml:"low_water"`
	// FilesHighWater/FilesLowWater: inodes, as "90%" of the filesystem's or
	// a number of cached files. Defaults 90% and 80%.
	FilesHighWater string `toml:"files_high_water"`
	FilesLowWater  string `toml:"files_low_water"`
	// PurgeInterval is how often usage is checked against the watermarks
	// (default "10s"; a fast fill also triggers a check).
	PurgeInterval string `toml:"purge_interval"`
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

// RouteEntry is a cached namespace prefix and its upstreams, tried in
// order ([[cache.route]]).
type RouteEntry struct {
	Prefix    string   `toml:"prefix"`
	Upstreams []string `toml:"upstreams"` // root://host:port or https://host:port URLs
}

// Enabled reports whether the cache role is configured.
func (c *Settings) Enabled() bool { return len(c.Routes) > 0 }

// Level is a watermark: a fraction of the filesystem or an absolute amount.
type Level struct {
	Fraction float64 // 0 < f ≤ 1, when given as a percentage
	Amount   int64   // otherwise
}

// Value is the form the cache takes: a fraction, or an amount above 1.
func (l Level) Value() float64 {
	if l.Fraction > 0 {
		return l.Fraction
	}
	return float64(l.Amount)
}

// ParseLevel reads "90%" or, with size true, "500GiB", else a count.
func ParseLevel(s string, size bool) (Level, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f > 100 {
			return Level{}, fmt.Errorf("%q is not a percentage from 0 to 100", s)
		}
		return Level{Fraction: f / 100}, nil
	}
	var n int64
	var err error
	if size {
		n, err = units.ParseSize(s)
	} else {
		n, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil || n <= 1 {
		return Level{}, fmt.Errorf("%q is neither a percentage (\"90%%\") nor an amount above 1", s)
	}
	return Level{Amount: n}, nil
}

// Defaults fills unset fields with their documented defaults, when the
// role is configured at all.
func (c *Settings) Defaults() {
	if !c.Enabled() {
		return
	}
	def := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	def(&c.RAM, "1GiB")
	def(&c.BlockSize, "1MiB")
	def(&c.Revalidate, "10m")
	def(&c.HighWater, "90%")
	def(&c.LowWater, "80%")
	def(&c.FilesHighWater, "90%")
	def(&c.FilesLowWater, "80%")
	if c.Streams == 0 {
		c.Streams = 16
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

// Config turns the file's settings into the runtime Config, all but the
// routes, whose upstreams the box dials with its credentials. The
// settings have been validated; what still fails is named by its key.
func (c *Settings) Config() (Config, error) {
	cfg := Config{Dir: c.Dir, ReadAhead: c.ReadAhead, Prefetch: c.Prefetch, PageCache: c.PageCache, Streams: c.Streams, UpstreamFiles: c.UpstreamFiles}
	var err error
	if c.UpstreamIdle != "" {
		if cfg.UpstreamIdle, err = time.ParseDuration(c.UpstreamIdle); err != nil {
			return Config{}, fmt.Errorf("cache.upstream_idle: %w", err)
		}
	}
	if cfg.RAM, err = units.ParseSize(c.RAM); err != nil {
		return Config{}, fmt.Errorf("cache.ram: %w", err)
	}
	if cfg.BlockSize, err = units.ParseSize(c.BlockSize); err != nil {
		return Config{}, fmt.Errorf("cache.block_size: %w", err)
	}
	if cfg.Revalidate, err = time.ParseDuration(c.Revalidate); err != nil {
		return Config{}, fmt.Errorf("cache.revalidate: %w", err)
	}
	if c.PurgeInterval != "" {
		if cfg.Space.Interval, err = time.ParseDuration(c.PurgeInterval); err != nil {
			return Config{}, fmt.Errorf("cache.purge_interval: %w", err)
		}
	}
	levels := []struct {
		s    string
		size bool
		dst  *float64
	}{
		{c.HighWater, true, &cfg.Space.BytesHigh}, {c.LowWater, true, &cfg.Space.BytesLow},
		{c.FilesHighWater, false, &cfg.Space.FilesHigh}, {c.FilesLowWater, false, &cfg.Space.FilesLow},
	}
	for _, l := range levels {
		v, err := ParseLevel(l.s, l.size)
		if err != nil {
			return Config{}, fmt.Errorf("cache watermark: %w", err)
		}
		*l.dst = v.Value()
	}
	return cfg, nil
}
