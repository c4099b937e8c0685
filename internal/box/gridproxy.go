package box

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"sync"

	"sitebox/internal/remote"
	"sitebox/internal/x509grid"
)

// gridOutbound are the box's own X.509 credentials toward other
// servers: the cache's robot proxy for its upstreams, the one copies
// present to [tpc] proxy_hosts, and the CA directory those servers'
// certificates are checked against. Nil fields: none configured.
type gridOutbound struct {
	cacheProxy func() (*x509grid.Credential, error)
	tpcProxy   func() (*x509grid.Credential, error)
	roots      *x509.CertPool
}

// buildOutbound reads the grid CA directory once when the box has a
// proxy to present or takes X.509 credentials ([auth.x509]): grid
// servers it reaches (upstreams, the other end of copies) are checked
// against it besides the system roots. The proxy files themselves are
// read at each use (renewals need no restart).
func (b *Box) buildOutbound() error {
	o := &b.outbound
	if b.cfg.Cache.Enabled() && b.cfg.Cache.UpstreamProxyFile != "" {
		o.cacheProxy = robotProxy("cache.upstream_proxy_file", b.cfg.Cache.UpstreamProxyFile, b.log)
	}
	if b.cfg.TPC.ProxyFile != "" {
		o.tpcProxy = robotProxy("tpc.proxy_file", b.cfg.TPC.ProxyFile, b.log)
	}
	if o.cacheProxy == nil && o.tpcProxy == nil && b.cfg.Auth.X509 == nil {
		return nil
	}
	dir := b.cfg.Auth.X509.GridCertDir()
	roots, err := remote.GridRoots(dir)
	if err != nil {
		return fmt.Errorf("the grid servers the box reaches are checked against the grid CA directory ([auth.x509] cert_dir): %w", err)
	}
	o.roots = roots
	return nil
}

// robotProxy gives the proxy in file at each use, logging when a new
// one is taken up or it cannot be used.
func robotProxy(key, file string, log *slog.Logger) func() (*x509grid.Credential, error) {
	f := x509grid.NewCredentialFile(file)
	var (
		mu      sync.Mutex
		last    *x509grid.Credential
		lastErr string
	)
	return func() (*x509grid.Credential, error) {
		c, err := f.Get()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil && err.Error() != lastErr:
			log.Warn("the X.509 proxy cannot be used; upstreams that need one refuse the box until it is renewed", "key", key, "err", err.Error())
			last, lastErr = nil, err.Error()
		case err == nil && c != last:
			log.Info("X.509 proxy loaded", "key", key, "file", file, "dn", c.Subject, "until", c.NotAfter.UTC())
			last, lastErr = c, ""
		}
		return c, err
	}
}
