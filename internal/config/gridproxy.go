package config

import (
	"errors"
	"fmt"
	"os"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/x509grid"
)

// ProxyWarn is how early a robot proxy near its end is announced: the
// renewal job (voms-proxy-init from cron, a service's myproxy) should
// have replaced it long before.
const ProxyWarn = 6 * time.Hour

// GridProxy is a robot X.509 proxy file the box presents upstream, with
// the setting that names it.
type GridProxy struct{ Key, File string }

// GridProxies are the box's own proxies: the cache's for its upstreams,
// the third-party copies' for the hosts [tpc] proxy_hosts lists.
func (c *Config) GridProxies() []GridProxy {
	var out []GridProxy
	if c.Cache.Enabled() && c.Cache.UpstreamProxyFile != "" {
		out = append(out, GridProxy{"cache.upstream_proxy_file", c.Cache.UpstreamProxyFile})
	}
	if c.TPC.ProxyFile != "" {
		out = append(out, GridProxy{"tpc.proxy_file", c.TPC.ProxyFile})
	}
	return out
}

// proxyProblems names a proxy file that cannot be read or holds no
// proxy. An expired proxy is a warning (proxyWarnings), not an error:
// the box starts, and uses the proxy once its renewal lands.
func (c *Config) proxyProblems() []Problem {
	var ps []Problem
	for _, p := range c.GridProxies() {
		_, err := x509grid.ReadCredential(p.File, time.Now())
		switch {
		case err == nil, errors.Is(err, x509grid.ErrExpired), errors.Is(err, x509grid.ErrNotYetValid):
		case errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission):
			ps = append(ps, Problem{Key: p.Key, Msg: fmt.Sprintf("cannot read %s: %v", p.File, problem.PathCause(err))})
		default:
			ps = append(ps, Problem{Key: p.Key, Msg: err.Error()})
		}
	}
	if len(c.GridProxies()) > 0 && c.Auth.X509 == nil {
		// With [auth.x509], its own check names the directory.
		dir := c.Auth.X509.GridCertDir()
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			ps = append(ps, Problem{Key: "auth.x509.cert_dir", Msg: fmt.Sprintf("the servers the box presents its X.509 proxy to are checked against the grid CA directory, and %s (default: $X509_CERT_DIR, else /etc/grid-security/certificates) is not one: install the IGTF CAs there or set [auth.x509] cert_dir", dir)})
		}
	}
	return ps
}

// proxyWarnings names a proxy that has expired, is not valid yet, or
// ends within ProxyWarn of now.
func (c *Config) proxyWarnings(now time.Time) []Problem {
	var ps []Problem
	for _, p := range c.GridProxies() {
		cred, err := x509grid.ReadCredential(p.File, now)
		switch {
		case errors.Is(err, x509grid.ErrExpired), errors.Is(err, x509grid.ErrNotYetValid):
			ps = append(ps, Problem{Key: p.Key, Msg: err.Error() + "; until then upstreams that need it refuse the box"})
		case err == nil && cred.NotAfter.Sub(now) < ProxyWarn:
			ps = append(ps, Problem{Key: p.Key, Msg: fmt.Sprintf("the proxy of %s in %s ends at %s, in %s: check that its renewal runs",
				cred.Subject, p.File, cred.NotAfter.UTC().Format(time.RFC3339), cred.NotAfter.Sub(now).Round(time.Minute))})
		}
	}
	return ps
}
