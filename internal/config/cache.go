package config

import (
	"fmt"
	"strings"

	"sitebox/internal/auth"
	"sitebox/internal/store"
)

// CacheWarnings names routes of a cache filling with its own token or
// proxy (upstream_token_file, upstream_proxy_file) where no [[auth.namespace]] rule covers some
// paths. Those paths are refused (the cache cannot know whether the
// origin would serve the client asking), so a rule for each cached
// prefix is what the operator wants.
func (c *Config) CacheWarnings() []Problem {
	cc := &c.Cache
	if !cc.Enabled() || cc.UpstreamTokenFile == "" && cc.UpstreamProxyFile == "" {
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
		msg := fmt.Sprintf("%s is filled with the cache's own credentials (upstream_token_file, upstream_proxy_file) but no [[auth.namespace]] rule covers it: its paths are refused to every client; add a rule with prefix = %q saying who may read it", r.Prefix, r.Prefix)
		if len(inside) > 0 {
			msg = fmt.Sprintf("%s is filled with the cache's own credentials (upstream_token_file, upstream_proxy_file) but [[auth.namespace]] rules cover only %s: other paths below it are refused to every client; add a rule for %s", r.Prefix, strings.Join(inside, ", "), r.Prefix)
		}
		ps = append(ps, Problem{Key: fmt.Sprintf("cache.route[%d].prefix", i+1), Msg: msg})
	}
	return ps
}

// ruled reports whether a namespace rule covers the whole of prefix.
func ruled(prefix string, ns []auth.NamespaceEntry) bool {
	for _, n := range ns {
		if store.HasPrefix(prefix, n.Prefix) {
			return true
		}
	}
	return false
}
