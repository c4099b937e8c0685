package auth

import (
	"fmt"
	"os"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
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
	// Refresh is how often the CA directory, the vomsdir and the mapfiles
	// are read again (default "1h"; between 1m and 24h), so CRLs
	// fetch-crl renews and CAs the IGTF distribution adds count without
	// a restart. 0 is unset; "0s" is refused.
	Refresh units.Duration `toml:"refresh" nonzero:"duration between 1m and 24h"`
	// GridMapfile maps DNs to local users, `"/DC=org/…/CN=Alice" alice`
	// per line (Globus' grid-mapfile); VOMSMapfile maps FQANs,
	// `"/cms/Role=production/Capability=NULL" cmsprod` (XRootD's
	// voms.mapfile, LCMAPS), or a DN and an FQAN, `"*" "/cms/*" cms`
	// (dCache's vorolemap). See x509mapfile.go.
	GridMapfile string `toml:"grid_mapfile"`
	VOMSMapfile string `toml:"voms_mapfile"`
	// MappedScopes are granted to every user a map names a local user
	// for, "{user}" standing for that user (as a Kerberos realm's scopes).
	MappedScopes []string `toml:"mapped_scopes"`
	// Maps are rules by DN or FQAN, each granting groups and scopes and
	// perhaps naming the local user.
	Maps []X509MapEntry `toml:"map"`
}

// X509MapEntry ([[auth.x509.map]]) is one mapping rule: it applies to
// the user whose DN is DN, or who holds an FQAN matching FQAN ("/cms",
// "/cms/Role=production", "/cms/*"), or both when both are set.
type X509MapEntry struct {
	DN   string `toml:"dn"`
	FQAN string `toml:"fqan"`
	// User is the local user the rule names ({user} in scopes): a DN's
	// own account, or an account an FQAN's holders share.
	User string `toml:"user"`
	// Groups the user is a member of ("/cms"), counted for read = "vo"
	// as VOMS groups are.
	Groups []string `toml:"groups"`
	// Scopes granted, as WLCG scopes ("storage.create:/store/mc",
	// "compute.create").
	Scopes []string `toml:"scopes"`
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
	if x.Refresh == 0 {
		x.Refresh = units.Duration(defaultX509Refresh)
	}
}

// GridCertDir is the CA directory the servers the box reaches are
// checked against: cert_dir with its defaults, also for a box without
// an [auth.x509] section (one that only presents a proxy upstream).
func (x *X509Settings) GridCertDir() string {
	if x != nil && x.CertDir != "" {
		return x.CertDir
	}
	return firstSet(os.Getenv(envCertDir), defaultCertDir)
}

// defaultX509Refresh is how often the trust stores are read again; the
// refresh must lie between a minute and a day.
const (
	defaultX509Refresh = time.Hour
	minX509Refresh     = time.Minute
	maxX509Refresh     = 24 * time.Hour
)

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
	if d := eff.Refresh.D(); d < minX509Refresh || d > maxX509Refresh {
		ps = append(ps, problem.Problem{Key: "auth.x509.refresh", Msg: fmt.Sprintf("%q is not a duration between %v and %v", d.String(), minX509Refresh, maxX509Refresh)})
	}
	_, mps := x.mapping()
	return append(ps, mps...)
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

// assertedVOs are the VOs X.509 users may be members of: the vomsdir's
// (defaults applied) and those the rules' groups name. known is false
// when the vomsdir cannot be read (a problem of its own), so any VO may
// turn out to be listed.
func (x *X509Settings) assertedVOs() (vos []string, known bool) {
	if x == nil {
		return nil, true
	}
	eff := *x
	eff.defaults(os.Getenv)
	vos, err := x509grid.VOMSDirVOs(eff.VOMSDir)
	return append(vos, x.ruleVOs()...), err == nil
}

// missingVOHint completes the refusal of a namespace whose VO nobody may
// assert, for a box that takes X.509 credentials.
func (x *X509Settings) missingVOHint(vo string) string {
	if x == nil {
		return ""
	}
	eff := *x
	eff.defaults(os.Getenv)
	return fmt.Sprintf("; for VOMS proxies, install %s/%s/<voms host>.lsc for each of the VO's VOMS servers", eff.VOMSDir, vo)
}
