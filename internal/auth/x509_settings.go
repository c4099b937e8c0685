package auth

import (
	"fmt"
	"os"

	"sitebox/internal/problem"
	"sitebox/internal/x509grid"
)

// X509Settings ([auth.x509]) locate the grid's trust stores for X.509
// proxies and VOMS attributes: the CA directory (<hash>.0 certificates,
// <hash>.r0 CRLs) and the vomsdir (<vo>/<voms host>.lsc). A box without
// the section takes no X.509 credentials.
type X509Settings struct {
	// CertDir is the CA directory (default $X509_CERT_DIR, else
	// /etc/grid-security/certificates).
	CertDir string `toml:"cert_dir"`
	// VOMSDir is the vomsdir (default $X509_VOMS_DIR, else
	// /etc/grid-security/vomsdir).
	VOMSDir string `toml:"voms_dir"`
	// CRL is how CRLs are used, as xrootd's gsi -crl: ignore, try
	// (default: a CA's CRL when it has one), use (every CA needs one) or
	// require (and it must be current).
	CRL string `toml:"crl"`
}

// The grid's conventional places, and the variables that move them.
const (
	defaultCertDir = "/etc/grid-security/certificates"
	defaultVOMSDir = "/etc/grid-security/vomsdir"
	envCertDir     = "X509_CERT_DIR"
	envVOMSDir     = "X509_VOMS_DIR"
)

// defaults fills unset fields: the environment's directories, else the
// conventional ones.
func (x *X509Settings) defaults(getenv func(string) string) {
	if x == nil {
		return
	}
	x.CertDir = firstSet(x.CertDir, getenv(envCertDir), defaultCertDir)
	x.VOMSDir = firstSet(x.VOMSDir, getenv(envVOMSDir), defaultVOMSDir)
	if x.CRL == "" {
		x.CRL = x509grid.CRLTry.String()
	}
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// validate names a CA directory or vomsdir that is not a readable
// directory (the one in effect, defaults included) and an unknown CRL
// mode.
func (x *X509Settings) validate(getenv func(string) string) []problem.Problem {
	if x == nil {
		return nil
	}
	eff := *x
	eff.defaults(getenv)
	var ps []problem.Problem
	for _, d := range []struct{ key, dir, def string }{
		{"cert_dir", eff.CertDir, "$" + envCertDir + ", else " + defaultCertDir},
		{"voms_dir", eff.VOMSDir, "$" + envVOMSDir + ", else " + defaultVOMSDir},
	} {
		st, err := os.Stat(d.dir)
		switch {
		case err != nil:
			ps = append(ps, problem.Problem{Key: "auth.x509." + d.key, Msg: fmt.Sprintf("cannot read %s (default: %s): %v", d.dir, d.def, problem.PathCause(err))})
		case !st.IsDir():
			ps = append(ps, problem.Problem{Key: "auth.x509." + d.key, Msg: fmt.Sprintf("%s is not a directory", d.dir)})
		}
	}
	if _, err := x509grid.ParseCRLMode(eff.CRL); err != nil {
		ps = append(ps, problem.Problem{Key: "auth.x509.crl", Msg: err.Error()})
	}
	return ps
}

// Verifier reads the CA directory and vomsdir the settings name (with
// defaults applied) into an x509grid.Verifier.
func (x *X509Settings) Verifier() (*x509grid.Verifier, error) {
	mode, err := x509grid.ParseCRLMode(x.CRL)
	if err != nil {
		return nil, fmt.Errorf("auth.x509.crl: %w", err)
	}
	return x509grid.New(x509grid.Config{CertDir: x.CertDir, VOMSDir: x.VOMSDir, CRL: mode})
}
