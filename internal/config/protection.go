package config

import (
	"fmt"
	"net/url"

	"sitebox/internal/remote"
	"sitebox/internal/store"
)

// protectedRouteProblems refuses a cache route that would fetch a
// protected namespace's bytes unencrypted: a privacy namespace's bytes
// never travel in clear, and an integrity namespace's fetch has no
// per-page checksums (the cache reads with kXR_read and HTTP ranges), so
// both need roots:// or https:// upstreams. A route is judged by the
// namespace that rules its prefix and by every namespace below it.
func (c *Config) protectedRouteProblems() []Problem {
	var ps []Problem
	for i, r := range c.Cache.Routes {
		ns, level := c.protectionOver(r.Prefix)
		if level == "" {
			continue
		}
		for _, up := range r.Upstreams {
			u, err := url.Parse(up)
			if err != nil || remote.Encrypted(u.Scheme) {
				continue // a bad URL is the route check's problem
			}
			ps = append(ps, Problem{Key: fmt.Sprintf("cache.route[%d].upstreams", i+1),
				Msg: fmt.Sprintf("%q would fetch %s unencrypted, but [[auth.namespace]] %s requires %s: use a roots:// or https:// upstream", up, r.Prefix, ns, level)})
		}
	}
	return ps
}

// protectionOver names the protected namespace (and its level) that
// rules part of the paths under prefix, or returns "" when none does.
func (c *Config) protectionOver(prefix string) (ns, level string) {
	var rules store.PrefixTable[string]
	for _, n := range c.Auth.Namespaces {
		rules.Add(n.Prefix, n.Protection)
	}
	if p, lvl, ok := rules.Match(prefix); ok && protectedLevel(lvl) {
		return p, lvl
	}
	for p, lvl := range rules.All() {
		if store.HasPrefix(p, prefix) && protectedLevel(lvl) {
			return p, lvl
		}
	}
	return "", ""
}

func protectedLevel(l string) bool { return l == "integrity" || l == "privacy" }
