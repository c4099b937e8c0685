package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
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
	return ps
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
