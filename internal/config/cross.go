package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"sitebox/internal/problem"
)

// crossProblems are conflicts between sections that each look fine alone
// but stop `serve`.
func (c *Config) crossProblems() []Problem {
	var ps []Problem
	seen := map[string]int{}
	site := ""
	if c.Auth.SiteIssuer {
		site = siteIssuerURL(c)
	}
	for i, is := range c.Auth.Issuers {
		key := fmt.Sprintf("auth.issuer[%d].url", i+1)
		u := strings.TrimSuffix(is.URL, "/")
		if u == "" {
			continue
		}
		if j, ok := seen[u]; ok {
			ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf("%q is listed twice (also [[auth.issuer]] number %d): keep one", is.URL, j)})
		}
		seen[u] = i + 1
		if site != "" && u == site {
			ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf("%q is this box's own site issuer (site_issuer = true): the box trusts its own tokens already; remove this [[auth.issuer]] (or site_issuer)", is.URL)})
		}
	}
	if c.Auth.SiteIssuer && c.Server.StateDir != "" {
		// serve stops at a missing key; a state dir not made yet is the
		// box's first start, which the operator is told about by keygen.
		if _, err := os.Stat(c.Server.StateDir); err == nil {
			key := filepath.Join(c.Server.StateDir, "issuer", "issuer.key")
			if _, err := os.Stat(key); err != nil {
				ps = append(ps, Problem{Key: "auth.site_issuer", Msg: fmt.Sprintf("cannot read the site issuer's key %s: %v; make it with `sitebox token keygen --state-dir %s` (as the box's user)", key, problem.PathCause(err), c.Server.StateDir)})
			}
		}
	}
	ps = append(ps, c.protectedRouteProblems()...)
	return append(ps, c.listenerClashes()...)
}

// listenerClashes names two listeners on one port: the second cannot bind
// and serve exits.
func (c *Config) listenerClashes() []Problem {
	var ps []Problem
	type lis struct{ key, addr string }
	var seen []lis
	for _, l := range []lis{{"root.addr", c.Root.Addr}, {"https.addr", c.HTTPS.Addr}, {"server.metrics_addr", c.Server.MetricsAddr},
		{"director.root_addr", c.Director.RootAddr}, {"director.https_addr", c.Director.HTTPSAddr}} {
		if l.addr == "" || l.addr == Off {
			continue
		}
		host, port, err := net.SplitHostPort(l.addr)
		if err != nil || port == "0" {
			continue
		}
		for _, o := range seen {
			oh, op, _ := net.SplitHostPort(o.addr)
			if op == port && (host == oh || isAny(host) || isAny(oh)) {
				ps = append(ps, Problem{Key: l.key, Msg: fmt.Sprintf("%q uses port %s, as %s %q does: one of them cannot listen", l.addr, port, o.key, o.addr)})
			}
		}
		seen = append(seen, l)
	}
	return ps
}

func isAny(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// siteIssuerURL is the `iss` the box's site issuer will use, worked out as
// the box does: [auth] issuer_url, else what the last start recorded in
// the state dir, else https://<hostname>:<https port>.
func siteIssuerURL(c *Config) string {
	if c.Auth.IssuerURL != "" {
		return strings.TrimSuffix(c.Auth.IssuerURL, "/")
	}
	if c.Server.StateDir != "" {
		if b, err := os.ReadFile(filepath.Join(c.Server.StateDir, "issuer", "url")); err == nil {
			if u := strings.TrimSpace(string(b)); u != "" {
				return strings.TrimSuffix(u, "/")
			}
		}
	}
	host, _ := os.Hostname()
	_, port, err := net.SplitHostPort(c.HTTPS.Addr)
	if err != nil || port == "" {
		port = "8443"
	}
	return "https://" + net.JoinHostPort(host, port)
}
