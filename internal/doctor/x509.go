package doctor

import (
	"context"
	"fmt"

	"sitebox/internal/config"
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
