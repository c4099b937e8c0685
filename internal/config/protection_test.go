package config

import (
	"errors"
	"strings"
	"testing"
)

// TestProtectedCacheRoutes: a cache route whose paths fall (wholly or in
// part) under a privacy or integrity namespace must fetch over TLS; the
// problem names the upstream, the route and the namespace.
func TestProtectedCacheRoutes(t *testing.T) {
	dir := t.TempDir()
	conf := func(route, upstream string) string {
		return `[auth]
site_issuer = true
[[auth.namespace]]
prefix = "/store"
read = "public"
protection = "privacy"
[[auth.namespace]]
prefix = "/store/open"
read = "public"
[[auth.namespace]]
prefix = "/data/integ"
read = "public"
protection = "integrity"
[cache]
dir = "` + dir + `"
[[cache.route]]
prefix = "` + route + `"
upstreams = ["` + upstream + `"]
`
	}
	tests := []struct {
		route, upstream, want string // want: the namespace named, "" for no problem
	}{
		{"/store/mc", "root://h:1094", "/store requires privacy"},
		{"/store/mc", "http://h:8080", "/store requires privacy"},
		{"/store/mc", "roots://h:1094", ""},
		{"/store/mc", "https://h:8443", ""},
		{"/store/open/x", "root://h:1094", ""},                       // ruled by the unprotected /store/open
		{"/data", "root://h:1094", "/data/integ requires integrity"}, // part of it is protected
		{"/other", "root://h:1094", ""},
	}
	for _, tc := range tests {
		_, _, err := Parse("site.toml", []byte(conf(tc.route, tc.upstream)))
		var ps *Problems
		var msgs []string
		if errors.As(err, &ps) {
			for _, p := range ps.List {
				if p.Key == "cache.route[1].upstreams" {
					msgs = append(msgs, p.Msg)
				}
			}
		}
		got := strings.Join(msgs, "; ")
		if tc.want == "" && got != "" || tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, tc.upstream) || !strings.Contains(got, "roots:// or https://")) {
			t.Errorf("route %s from %s: %q, want a problem naming %q", tc.route, tc.upstream, got, tc.want)
		}
	}
}
