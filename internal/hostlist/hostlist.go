// Package hostlist matches host:port addresses against a list an
// operator wrote: exact host:ports, hosts (any port) and *.domain
// wildcards.
package hostlist

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// List is the set of hosts a client may be sent to, e.g. the hosts a
// cache follows redirects to. A redirect is an upstream telling the cache
// to fetch from somewhere else, with its own credentials: followed
// blindly, it lets a hostile or hijacked upstream read the cache's token,
// or make the cache fetch from internal hosts and serve what it got to
// anyone. A List is immutable and safe for concurrent use.
type List struct {
	exact     map[string]bool // "host:port" and bare "host" (any port)
	zones     []string        // ".example.org" from "*.example.org", any port
	zonePorts []string        // ".example.org:1094" from "*.example.org:1094"
	setting   string          // named in refusals
}

// New lists the host:ports of the URLs (a root:// URL without a port
// means 1094, https 443) and the patterns: "host:port", "host" (any
// port), "*.example.org" or "*.example.org:1094" (any host below the
// domain). setting is the configuration key named when a host is refused.
func New(urls, patterns []string, setting string) (*List, error) {
	t := &List{exact: map[string]bool{}, setting: setting}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("hostlist: %q is not a URL with a host", raw)
		}
		t.exact[canonHostPort(u.Host, u.Scheme)] = true
	}
	for _, p := range patterns {
		if err := CheckPattern(p); err != nil {
			return nil, err
		}
		p = strings.ToLower(strings.TrimSpace(p))
		if zone, ok := strings.CutPrefix(p, "*"); ok {
			if strings.Contains(zone, ":") {
				t.zonePorts = append(t.zonePorts, zone)
			} else {
				t.zones = append(t.zones, zone)
			}
			continue
		}
		t.exact[p] = true
	}
	return t, nil
}

// CheckPattern explains what is wrong with a pattern, or returns nil.
func CheckPattern(p string) error {
	s := strings.TrimSpace(p)
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return fmt.Errorf("host pattern %q: bad port", p)
		}
		host = h
	}
	switch {
	case host == "" || host == "*" || host == "*.":
		return fmt.Errorf("host pattern %q: name a host, host:port or *.domain (a list that allows every host protects nothing)", p)
	case strings.HasPrefix(host, "*") && !strings.HasPrefix(host, "*."):
		return fmt.Errorf("host pattern %q: a wildcard must be a whole label, as in *.example.org", p)
	case strings.Contains(strings.TrimPrefix(host, "*."), "*"):
		return fmt.Errorf("host pattern %q: only a leading *. is allowed", p)
	case strings.ContainsAny(host, "/?#@ \t"):
		return fmt.Errorf("host pattern %q: want host, host:port or *.domain, not a URL", p)
	}
	return nil
}

// Allows reports whether hostport ("host:port") may be contacted.
func (t *List) Allows(hostport string) bool {
	hp := strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hp)
	if err != nil {
		return false
	}
	if t.exact[net.JoinHostPort(host, port)] || t.exact[host] {
		return true
	}
	for _, z := range t.zones {
		if strings.HasSuffix(host, z) {
			return true
		}
	}
	for _, z := range t.zonePorts {
		if strings.HasSuffix(host+":"+port, z) {
			return true
		}
	}
	return false
}

// Check is Allows as the error a client refuses a redirect with: it names
// the host and the setting that would let it through.
func (t *List) Check(hostport string) error {
	if t.Allows(hostport) {
		return nil
	}
	return fmt.Errorf("redirect to %s refused: it is neither a configured upstream nor in %s", hostport, t.setting)
}

// canonHostPort is u.Host with the scheme's default port when it has none.
func canonHostPort(host, scheme string) string {
	host = strings.ToLower(host)
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "1094"
	switch scheme {
	case "https":
		port = "443"
	case "http":
		port = "80"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}
