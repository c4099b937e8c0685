package cache

import (
	"fmt"
	"os"
	"strings"
	"time"

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
	if c.UpstreamIdle != "" {
		if d, err := time.ParseDuration(c.UpstreamIdle); err != nil || d <= 0 {
			add("upstream_idle", "%q is not a positive duration (e.g. \"5s\")", c.UpstreamIdle)
		}
	}
	if c.UpstreamFiles < 0 || c.UpstreamFiles > 1_000_000 {
		add("upstream_files", "%d is not from 1 to 1000000", c.UpstreamFiles)
	}
	if c.Streams < 0 || c.Streams > 64 {
		add("streams", "%d is not from 1 to 64", c.Streams)
	}
	l.All = append(l.All, c.validateWatermarks()...)
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

func (c *Settings) validateWatermarks() []problem.Problem {
	var ps []problem.Problem
	pair := func(hiKey, loKey, hi, lo string, size bool) {
		h, err1 := ParseLevel(hi, size)
		l, err2 := ParseLevel(lo, size)
		if err1 != nil {
			ps = append(ps, problem.Problem{Key: "cache." + hiKey, Msg: err1.Error()})
		}
		if err2 != nil {
			ps = append(ps, problem.Problem{Key: "cache." + loKey, Msg: err2.Error()})
		}
		if err1 == nil && err2 == nil {
			if (h.Fraction > 0) != (l.Fraction > 0) {
				ps = append(ps, problem.Problem{Key: "cache." + loKey, Msg: fmt.Sprintf("%q and %s %q must both be percentages or both amounts", lo, hiKey, hi)})
			} else if l.Value() >= h.Value() {
				ps = append(ps, problem.Problem{Key: "cache." + loKey, Msg: fmt.Sprintf("%q must be below %s %q", lo, hiKey, hi)})
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
