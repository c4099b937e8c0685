package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/hostlist"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// Cache configures the caching proxy role: reads below each route's prefix
// are served from local disk, fetched from the route's upstreams on a miss.
type Cache struct {
	// Dir holds cached data and block maps (required when routes are set).
	Dir string `toml:"dir"`
	// RAM bounds block buffers in flight and waiting for the disk
	// (default "1GiB").
	RAM string `toml:"ram"`
	// BlockSize is the caching unit (default "1MiB").
	BlockSize string `toml:"block_size"`
	// ReadAhead is blocks fetched ahead of sequential readers (default 8;
	// -1 disables).
	ReadAhead int `toml:"read_ahead"`
	// Prefetch fetches whole files once opened.
	Prefetch bool `toml:"prefetch"`
	// PageCache caches through the kernel page cache instead of O_DIRECT
	// (used anyway where the filesystem lacks O_DIRECT, e.g. tmpfs).
	PageCache bool `toml:"page_cache"`
	// Revalidate is how long a cached copy is trusted before an open checks
	// the upstream's size and mtime (default "10m").
	Revalidate string `toml:"revalidate"`
	// Streams is connections per root:// upstream (default 16).
	Streams int `toml:"streams"`
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
	// TrustedRedirects are the hosts besides the configured upstreams
	// that an upstream may redirect the cache to: "host:port", "host"
	// (any port) or "*.example.org". A cache in front of a director lists
	// the director's data servers here. Redirects elsewhere are refused,
	// so an upstream cannot send the cache's token, or its fetches, to a
	// host nobody chose. Default: none (only the upstreams themselves).
	TrustedRedirects []string     `toml:"trusted_redirects"`
	Routes           []CacheRoute `toml:"route"`
}

// CacheRoute is a cached namespace prefix and its upstreams, tried in order.
type CacheRoute struct {
	Prefix    string   `toml:"prefix"`
	Upstreams []string `toml:"upstreams"` // root://host:port or https://host:port URLs
}

// Enabled reports whether the cache role is configured.
func (c *Cache) Enabled() bool { return len(c.Routes) > 0 }

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

func (c *Cache) applyDefaults() {
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
	if c.ReadAhead == 0 {
		c.ReadAhead = 8
	}
	if c.Streams == 0 {
		c.Streams = 16
	}
}

func (c *Cache) validate(exports []origin.Export) []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: "cache." + key, Msg: fmt.Sprintf(format, args...)})
	}
	if !c.Enabled() {
		if c.Dir != "" {
			add("route", "a cache directory is set but no [[cache.route]] says what to cache")
		}
		return ps
	}
	switch {
	case c.Dir == "":
		add("dir", "missing: the directory cached data is kept in")
	case !strings.HasPrefix(c.Dir, "/"):
		add("dir", "%q must be an absolute directory", c.Dir)
	default:
		if fi, err := os.Stat(c.Dir); err == nil && !fi.IsDir() {
			add("dir", "%s is not a directory", c.Dir)
		}
	}
	sizes := map[string]string{"ram": c.RAM, "block_size": c.BlockSize}
	for _, k := range []string{"ram", "block_size"} {
		if v := sizes[k]; v != "" {
			if n, err := units.ParseSize(v); err != nil || n <= 0 {
				add(k, "%q is not a size (e.g. \"1GiB\")", v)
			}
		}
	}
	if bs, err := units.ParseSize(c.BlockSize); err == nil && c.BlockSize != "" && (bs < 64<<10 || bs > 64<<20 || bs&(bs-1) != 0) {
		add("block_size", "%q must be a power of two from 64KiB to 64MiB", c.BlockSize)
	}
	if c.Revalidate != "" {
		if d, err := time.ParseDuration(c.Revalidate); err != nil || d <= 0 {
			add("revalidate", "%q is not a positive duration (e.g. \"10m\")", c.Revalidate)
		}
	}
	if c.PurgeInterval != "" {
		if d, err := time.ParseDuration(c.PurgeInterval); err != nil || d <= 0 {
			add("purge_interval", "%q is not a positive duration (e.g. \"10s\")", c.PurgeInterval)
		}
	}
	if c.Streams < 0 || c.Streams > 64 {
		add("streams", "%d is not from 1 to 64", c.Streams)
	}
	ps = append(ps, c.validateWatermarks()...)
	if c.UpstreamCA != "" {
		if _, err := os.Stat(c.UpstreamCA); err != nil {
			add("upstream_ca", "cannot read %s: %v", c.UpstreamCA, unwrapPath(err))
		}
	}
	seen := map[string]int{}
	for i, r := range c.Routes {
		key := fmt.Sprintf("route[%d]", i+1)
		clean, err := store.CleanPath(r.Prefix)
		switch {
		case r.Prefix == "":
			add(key+".prefix", "missing: the namespace path to cache, e.g. \"/store\"")
		case err != nil || !strings.HasPrefix(r.Prefix, "/"):
			add(key+".prefix", "%q must be an absolute namespace path without '..'", r.Prefix)
		case clean != r.Prefix:
			add(key+".prefix", "%q should be written %q", r.Prefix, clean)
		}
		if j, dup := seen[clean]; dup && clean != "" {
			add(key+".prefix", "%q is already cached by route[%d]", clean, j)
		}
		seen[clean] = i + 1
		for j, e := range exports {
			if clean != "" && (store.HasPrefix(clean, e.Prefix) || store.HasPrefix(e.Prefix, clean)) {
				add(key+".prefix", "%q overlaps export[%d] %q: a path is either exported or cached", clean, j+1, e.Prefix)
			}
		}
		if len(r.Upstreams) == 0 {
			add(key+".upstreams", "missing: at least one root://host:port or https://host:port")
		}
		for _, u := range r.Upstreams {
			if msg := CheckUpstreamURL(u); msg != "" {
				add(key+".upstreams", "%s", msg)
			} else if c.UpstreamTokenFile != "" && (strings.HasPrefix(u, "root://") || strings.HasPrefix(u, "xroot://") || strings.HasPrefix(u, "http://")) {
				add(key+".upstreams", "%q: the upstream token is sent only over TLS; use roots:// or https://", u)
			}
		}
	}
	for _, p := range c.TrustedRedirects {
		if err := hostlist.CheckPattern(p); err != nil {
			add("trusted_redirects", "%v", err)
		}
	}
	if c.UpstreamTokenFile != "" {
		if _, err := os.Stat(c.UpstreamTokenFile); err != nil {
			add("upstream_token_file", "cannot read %s: %v", c.UpstreamTokenFile, unwrapPath(err))
		}
	}
	return ps
}

// Warnings names what is allowed but probably not meant: routes of a cache
// filling with its own token (upstream_token_file) where no
// [[auth.namespace]] rule covers some paths. Those paths are refused (the
// cache cannot know whether the origin would serve the client asking),
// so a rule for each cached prefix is what the operator wants.
func (c *Config) Warnings() []Problem {
	cc := &c.Cache
	if !cc.Enabled() || cc.UpstreamTokenFile == "" {
		return nil
	}
	var ps []Problem
	for i, r := range cc.Routes {
		if ruled(r.Prefix, c.Auth.Namespaces) {
			continue
		}
		var inside []string
		for _, n := range c.Auth.Namespaces {
			if store.HasPrefix(n.Prefix, r.Prefix) {
				inside = append(inside, n.Prefix)
			}
		}
		msg := fmt.Sprintf("%s is filled with the cache's own token (upstream_token_file) but no [[auth.namespace]] rule covers it: its paths are refused to every client; add a rule with prefix = %q saying who may read it", r.Prefix, r.Prefix)
		if len(inside) > 0 {
			msg = fmt.Sprintf("%s is filled with the cache's own token (upstream_token_file) but [[auth.namespace]] rules cover only %s: other paths below it are refused to every client; add a rule for %s", r.Prefix, strings.Join(inside, ", "), r.Prefix)
		}
		ps = append(ps, Problem{Key: fmt.Sprintf("cache.route[%d].prefix", i+1), Msg: msg})
	}
	return ps
}

// ruled reports whether a namespace rule covers the whole of prefix.
func ruled(prefix string, ns []AuthNamespace) bool {
	for _, n := range ns {
		if store.HasPrefix(prefix, n.Prefix) {
			return true
		}
	}
	return false
}

func (c *Cache) validateWatermarks() []Problem {
	var ps []Problem
	pair := func(hiKey, loKey, hi, lo string, size bool) {
		h, err1 := ParseLevel(hi, size)
		l, err2 := ParseLevel(lo, size)
		if err1 != nil {
			ps = append(ps, Problem{Key: "cache." + hiKey, Msg: err1.Error()})
		}
		if err2 != nil {
			ps = append(ps, Problem{Key: "cache." + loKey, Msg: err2.Error()})
		}
		if err1 == nil && err2 == nil {
			if (h.Fraction > 0) != (l.Fraction > 0) {
				ps = append(ps, Problem{Key: "cache." + loKey, Msg: fmt.Sprintf("%q and %s %q must both be percentages or both amounts", lo, hiKey, hi)})
			} else if l.Value() >= h.Value() {
				ps = append(ps, Problem{Key: "cache." + loKey, Msg: fmt.Sprintf("%q must be below %s %q", lo, hiKey, hi)})
			}
		}
	}
	if c.HighWater != "" || c.LowWater != "" {
		pair("high_water", "low_water", c.HighWater, c.LowWater, true)
	}
	if c.FilesHighWater != "" || c.FilesLowWater != "" {
		pair("files_high_water", "files_low_water", c.FilesHighWater, c.FilesLowWater, false)
	}
	return ps
}

// CheckUpstreamURL explains what is wrong with an upstream URL, or "".
func CheckUpstreamURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Sprintf("%q is not a URL: %v", s, err)
	}
	switch u.Scheme {
	case "root", "xroot", "roots", "xroots", "https", "http":
	default:
		return fmt.Sprintf("%q: upstream must be root://, roots:// or https://host:port", s)
	}
	if u.Host == "" || u.Port() == "" {
		return fmt.Sprintf("%q: give host and port, e.g. root://origin.example.org:1094", s)
	}
	return ""
}
