package doctor

import (
	"context"
	"fmt"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/x509grid"
)

// checkX509 looks at the trust stores X.509 proxies are checked against
// ([auth.x509]): CAs present, CRLs current enough for the CRL mode, a
// VOMS server listed for each VO a read = "vo" namespace needs.
func checkX509(_ context.Context, cfg *config.Config, o *Options) []Check {
	x := cfg.Auth.X509
	if x == nil {
		return []Check{{Name: "[auth.x509]", Status: StatusSkip, Summary: "the box takes no X.509 credentials"}}
	}
	fs := cfg.Auth.X509Findings(o.Now())
	if len(fs) == 0 {
		return []Check{{Name: "[auth.x509]", Status: StatusOK,
			Summary: fmt.Sprintf("%s and %s accept the credentials they should (CRL mode %q)", x.CertDir, x.VOMSDir, x.CRL)}}
	}
	var out []Check
	for _, f := range fs {
		c := Check{Name: f.Key, Status: StatusWarn, Summary: f.Msg, Fix: f.Fix,
			Explain: "Grid users' proxies (voms-proxy-init, grid-proxy-init) are verified against the CA directory, its CRLs and the vomsdir; what is missing or out of date there refuses them."}
		if f.Severe {
			c.Status = StatusError
		}
		out = append(out, c)
	}
	return out
}

// checkProxies looks at the box's own X.509 proxies (the cache's
// upstream_proxy_file, [tpc] proxy_file): readable, a proxy, and not
// past or near its end.
func checkProxies(_ context.Context, cfg *config.Config, o *Options) []Check {
	var out []Check
	const explain = "The box presents this proxy to upstreams that ask for one (gsi on root://, a client certificate on https://); it is read again when renewed on disk, so a cron job running voms-proxy-init (or the robot certificate's renewal) keeps it valid without a restart."
	for _, p := range cfg.GridProxies() {
		c := Check{Name: p.Key, Explain: explain}
		cred, err := x509grid.ReadCredential(p.File, o.Now())
		switch {
		case err != nil:
			c.Status, c.Summary = StatusError, err.Error()
			c.Fix = "point " + p.Key + " at a valid proxy file (the proxy, its key, the certificate that issued it), readable by the box's user, and check that its renewal runs"
		case cred.NotAfter.Sub(o.Now()) < config.ProxyWarn:
			c.Status = StatusWarn
			c.Summary = fmt.Sprintf("the proxy of %s ends at %s", cred.Subject, cred.NotAfter.UTC().Format(time.RFC3339))
			c.Fix = "check that the proxy's renewal runs"
		default:
			c.Status = StatusOK
			c.Summary = fmt.Sprintf("%s: a proxy of %s, valid until %s", p.File, cred.Subject, cred.NotAfter.UTC().Format(time.RFC3339))
		}
		out = append(out, c)
	}
	return out
}
