package cache

import (
	"fmt"
	"os"
	"strings"

	"sitebox/internal/hostlist"
	"sitebox/internal/problem"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// Validate returns every problem in c, keyed as in the file
// ("cache.dir"). exports are the prefixes the box exports, in file order:
// a path is either exported or cached.
func (c *Settings) Validate(exports []string) []problem.Problem {
	l := &problem.List{Section: "cache"}
	add := l.Add
	if !c.Enabled() {
		if c.Dir != "" {
			add("route", "a cache directory is set but no [[cache.route]] says what to cache")
		}
		return l.All
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
	c.checkValues(add)
	if c.UpstreamCA != "" {
		if _, err := os.Stat(c.UpstreamCA); err != nil {
			add("upstream_ca", "cannot read %s: %v", c.UpstreamCA, problem.PathCause(err))
		}
	}
	c.validateRoutes(add, exports)
	for _, p := range c.TrustedRedirects {
		if err := hostlist.CheckPattern(p); err != nil {
			add("trusted_redirects", "%v", err)
		}
	}
	if c.UpstreamTokenFile != "" {
		if _, err := os.Stat(c.UpstreamTokenFile); err != nil {
			add("upstream_token_file", "cannot read %s: %v", c.UpstreamTokenFile, problem.PathCause(err))
		}
	}
	return l.All
}

// checkValues checks the ranges of the settings that are numbers:
// Validate for the file, New for a Cache made without one. Unset (zero)
// values take their defaults and are left alone.
func (c *Settings) checkValues(add func(key, format string, args ...any)) {
	if c.RAM < 0 {
		add("ram", "%d is not a size (e.g. \"1GiB\")", c.RAM.Bytes())
	}
	if bs := c.BlockSize.Bytes(); bs != 0 && (bs < 64<<10 || bs > 64<<20 || bs&(bs-1) != 0) {
		add("block_size", "%q must be a power of two from 64KiB to 64MiB", c.BlockSize)
	} else if ram := c.ramOrDefault(); ram > 0 && ram < 4*c.blockOrDefault() {
		add("ram", "%q is less than 4 blocks of %q (block_size): the cache could not fetch a block ahead while another is written", units.Size(ram), units.Size(c.blockOrDefault()))
	}
	for _, d := range []struct {
		key, eg string
		v       units.Duration
	}{{"revalidate", "10m", c.Revalidate}, {"purge_interval", "10s", c.PurgeInterval}, {"upstream_idle", "5s", c.UpstreamIdle}} {
		if d.v < 0 {
			add(d.key, "%q is not a positive duration (e.g. \"%s\")", d.v, d.eg)
		}
	}
	if c.UpstreamFiles < 0 || c.UpstreamFiles > 1_000_000 {
		add("upstream_files", "%d is not from 1 to 1000000", c.UpstreamFiles)
	}
	if c.Streams < 0 || c.Streams > 64 {
		add("streams", "%d is not from 1 to 64", c.Streams)
	}
	w := c.Watermarks
	pair(add, "high_water", "low_water", float64(w.HighWater), float64(w.LowWater), w.HighWater.String(), w.LowWater.String())
	pair(add, "files_high_water", "files_low_water", float64(w.FilesHighWater), float64(w.FilesLowWater), w.FilesHighWater.String(), w.FilesLowWater.String())
}

func (c *Settings) ramOrDefault() int64 {
	if c.RAM == 0 {
		return 1 << 30
	}
	return c.RAM.Bytes()
}

func (c *Settings) blockOrDefault() int64 {
	if c.BlockSize == 0 {
		return DefaultBlockSize
	}
	return c.BlockSize.Bytes()
}

// pair checks a high and a low watermark, either unset (its default, 90%
// or 80%, applies): both are shares of the filesystem or both amounts,
// and the low one is below the high one.
func pair(add func(key, format string, args ...any), hiKey, loKey string, hi, lo float64, his, los string) {
	if hi == 0 && lo == 0 {
		return
	}
	if hi == 0 {
		hi, his = 0.90, "90%"
	}
	if lo == 0 {
		lo, los = 0.80, "80%"
	}
	for _, l := range []struct {
		key string
		v   float64
	}{{hiKey, hi}, {loKey, lo}} {
		if l.v < 0 {
			add(l.key, "%v is neither a percentage (\"90%%\") nor an amount above 1", l.v)
			return
		}
	}
	switch {
	case fraction(hi) != fraction(lo):
		add(loKey, "%q and %s %q must both be percentages or both amounts", los, hiKey, his)
	case lo >= hi:
		add(loKey, "%q must be below %s %q", los, hiKey, his)
	}
}

// validateRoutes checks the [[cache.route]] entries.
func (c *Settings) validateRoutes(add func(key, format string, args ...any), exports []string) {
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
			if clean != "" && (store.HasPrefix(clean, e) || store.HasPrefix(e, clean)) {
				add(key+".prefix", "%q overlaps export[%d] %q: a path is either exported or cached", clean, j+1, e)
			}
		}
		if len(r.Upstreams) == 0 {
			add(key+".upstreams", "missing: at least one root://host:port or https://host:port")
		}
		for _, u := range r.Upstreams {
			if msg := CheckUpstreamURL(u); msg != "" {
				add(key+".upstreams", "%s", msg)
			} else if c.UpstreamTokenFile != "" && !encrypted(u) {
				add(key+".upstreams", "%q: the upstream token is sent only over TLS; use roots:// or https://", u)
			}
		}
	}
}
