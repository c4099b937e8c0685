package x509grid

import (
	"errors"
	"fmt"
	"time"
)

// CRLMode is how certificate revocation lists are used, as xrootd's gsi
// option -crl: names its levels. Whatever the mode (but CRLIgnore), a
// serial listed in a CRL that verifies is refused.
type CRLMode int

const (
	// CRLTry (the default) uses a CA's CRL when it has one: a CA without
	// CRL is accepted, a CA whose CRL file does not verify refuses its
	// certificates, and a CRL past its next update is reported in
	// Result.Warnings and still used.
	CRLTry CRLMode = iota
	// CRLIgnore reads no CRL.
	CRLIgnore
	// CRLUse is CRLTry, but a CA without a CRL refuses its certificates.
	CRLUse
	// CRLRequire is CRLUse, and a CRL past its next update (or before
	// its this-update) refuses the CA's certificates too.
	CRLRequire
)

// ParseCRLMode reads "try", "ignore", "use" or "require".
func ParseCRLMode(s string) (CRLMode, error) {
	for m := CRLTry; m <= CRLRequire; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("%q is not a CRL mode (use ignore, try, use or require)", s)
}

func (m CRLMode) String() string {
	switch m {
	case CRLTry:
		return "try"
	case CRLIgnore:
		return "ignore"
	case CRLUse:
		return "use"
	case CRLRequire:
		return "require"
	}
	return fmt.Sprintf("CRLMode(%d)", int(m))
}

// Config is what a Verifier trusts and how strictly.
type Config struct {
	// CertDir is the CA directory in the grid layout: CA certificates as
	// <subject hash>.0 (.1, … for names sharing a hash), CRLs as
	// <hash>.r0. Required.
	CertDir string
	// VOMSDir is the vomsdir: one directory per VO, holding a
	// <voms host>.lsc file (the VOMS server's DN, then its CA's DN) or the
	// VOMS server's certificate. Empty: no attribute certificate is
	// accepted (each is reported in Result.RejectedACs).
	VOMSDir string
	// CRL is the revocation policy (default CRLTry).
	CRL CRLMode
	// AllowLegacyProxies accepts Globus GT2 proxies ("CN=proxy",
	// "CN=limited proxy", no proxyCertInfo), as xrootd and VOMS do.
	// Default: RFC 3820 proxies only, as OpenSSL. GT3 draft proxies are
	// never accepted.
	AllowLegacyProxies bool
	// Hostnames are this server's names: an attribute certificate
	// restricted to targets is accepted only if one of them is listed.
	Hostnames []string
	// ClockSkew widens every validity period by this much at both ends
	// (default none; VOMS allows 5 minutes on attribute certificates).
	ClockSkew time.Duration
	// Limits bound the work of one verification (zero: defaults).
	Limits Limits
}

// Verifier checks proxy chains and VOMS attribute certificates against
// the CA directory and vomsdir as they were when it was made: reload
// them by making a new Verifier. It is safe for concurrent use.
type Verifier struct {
	cfg      Config
	lim      Limits
	cas      *caDir
	voms     *vomsDir
	warnings []string
}

// New reads the CA directory and the vomsdir. Files it cannot use (an
// unreadable certificate, a CRL no CA signed) are skipped and reported by
// Warnings; a directory that cannot be read is an error.
func New(cfg Config) (*Verifier, error) {
	if cfg.CertDir == "" {
		return nil, errors.New("x509grid: no CA directory configured")
	}
	if cfg.CRL < CRLTry || cfg.CRL > CRLRequire {
		return nil, fmt.Errorf("x509grid: %v", cfg.CRL)
	}
	v := &Verifier{cfg: cfg, lim: cfg.Limits.withDefaults()}
	var err error
	if v.cas, err = loadCADir(cfg.CertDir, cfg.CRL != CRLIgnore, v.lim); err != nil {
		return nil, fmt.Errorf("x509grid: CA directory: %w", err)
	}
	v.warnings = append(v.warnings, v.cas.warnings...)
	if cfg.VOMSDir != "" {
		if v.voms, err = loadVOMSDir(cfg.VOMSDir, v.lim); err != nil {
			return nil, fmt.Errorf("x509grid: vomsdir: %w", err)
		}
		v.warnings = append(v.warnings, v.voms.warnings...)
	}
	return v, nil
}

// Warnings lists the files of the CA directory and vomsdir that were
// skipped, and why.
func (v *Verifier) Warnings() []string { return append([]string(nil), v.warnings...) }

// CAs is how many CA certificates the CA directory holds.
func (v *Verifier) CAs() int { return v.cas.count }

// inValidity checks at against a validity period widened by the skew.
func (v *Verifier) inValidity(notBefore, notAfter, at time.Time) error {
	if at.Before(notBefore.Add(-v.cfg.ClockSkew)) {
		return fmt.Errorf("%w (valid from %s)", ErrNotYetValid, notBefore.UTC().Format(time.RFC3339))
	}
	if at.After(notAfter.Add(v.cfg.ClockSkew)) {
		return fmt.Errorf("%w at %s", ErrExpired, notAfter.UTC().Format(time.RFC3339))
	}
	return nil
}
