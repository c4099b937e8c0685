package auth

import (
	"fmt"
	"os"
	"strings"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/units"
)

// Settings configures bearer tokens ([auth] in the config file): which issuers the box trusts and what
// each namespace requires. A box without [[auth.namespace]] serves every
// path as before (public, writable where exported).
type Settings struct {
	// Issuers are the token issuers trusted here.
	Issuers []IssuerEntry `toml:"issuer"`
	// ClockSkew allowed on exp, nbf and iat, and on Kerberos
	// authenticators (default "60s"; at most 1h). 0 is unset: "0s" has no
	// meaning of its own (the verifiers never took it for "no skew": the
	// token verifier read it as its 60s, Kerberos as its 5m, and no
	// grid's clocks agree to the second), so the config's type check
	// refuses it.
	ClockSkew units.Duration `toml:"clock_skew" nonzero:"positive duration of at most 1h"`
	// MaxTokenLifetime is the longest validity of a token accepted
	// (default "168h"; the WLCG profile's default maximum is "6h";
	// between 1m and a year; 0 is unset and "0s" refused).
	MaxTokenLifetime units.Duration `toml:"max_token_lifetime" nonzero:"duration between 1m and 8760h"`
	// CA is a PEM file of extra CA certificates trusted when fetching
	// issuers' keys over https (another box's self-signed certificate).
	CA string `toml:"ca"`
	// SiteIssuer makes this box a token issuer of its own: it serves its
	// JWKS and OpenID configuration over https://, and trusts its own
	// tokens. `sitebox token keygen` makes the key (in state_dir/issuer).
	SiteIssuer bool `toml:"site_issuer"`
	// IssuerURL is the site issuer's `iss` (default: https://<hostname>:<https port>).
	IssuerURL string `toml:"issuer_url"`
	// SiteIssuerVOs are the VOs this box trusts its own site issuer to
	// assert (`sitebox token issue --groups /cms` counts only with "cms"
	// here), as VOs does for [[auth.issuer]]. Default: none.
	SiteIssuerVOs []string `toml:"site_issuer_vos"`
	// Operators may see the dashboard's file names and user subjects
	// (anonymous visitors see only totals).
	Operators []OperatorEntry `toml:"operator"`
	// Namespaces hold the policy per namespace prefix; the longest
	// matching prefix applies.
	Namespaces []NamespaceEntry `toml:"namespace"`
	// Kerberos takes campus users' Kerberos tickets (see kerberos_settings.go).
	Kerberos KerberosSettings `toml:"kerberos"`
	// X509 locates the CA directory and vomsdir for X.509 proxies; nil
	// without [auth.x509] (see x509_settings.go).
	X509 *X509Settings `toml:"x509"`
}

// IssuerEntry is one trusted token issuer.
type IssuerEntry struct {
	// URL is the issuer (the tokens' "iss"); its keys are found through
	// URL/.well-known/openid-configuration unless JWKS or JWKSURL is set.
	URL string `toml:"url"`
	// JWKS is a local JWKS file with the issuer's keys (no fetching).
	JWKS string `toml:"jwks"`
	// JWKSURL overrides the discovered key set URL.
	JWKSURL string `toml:"jwks_url"`
	// Audience lists the "aud" values accepted (the WLCG "any" audience
	// is always accepted).
	Audience []string `toml:"audience"`
	// BasePath is the namespace path the issuer's scopes are relative to
	// (default "/").
	BasePath string `toml:"base_path"`
	// VOs are the virtual organisations this issuer speaks for: its
	// tokens' groups (wlcg.groups) of other VOs are ignored, so a
	// foreign issuer cannot make its users members of "cms". Default:
	// none (its tokens carry scopes only).
	VOs []string `toml:"vos"`
}

// OperatorEntry is a token identity allowed to see the dashboard's
// details: the issuer (a trusted [[auth.issuer]] url, or empty for this
// box's site issuer) and the subject.
type OperatorEntry struct {
	Issuer  string `toml:"issuer"`
	Subject string `toml:"subject"`
}

// NamespaceEntry is the policy of one namespace prefix.
type NamespaceEntry struct {
	Prefix string `toml:"prefix"`
	// Read is "public" (default), "token" (a read scope for the path) or
	// "vo" (a token of one of VOs).
	Read string   `toml:"read"`
	VOs  []string `toml:"vos"`
	// Write is "token" (default: create/modify scopes) or "none".
	Write string `toml:"write"`
	// Protection is "none" (default), "integrity" (TLS, or per-page
	// checksums on root://) or "privacy" (TLS only).
	Protection string `toml:"protection"`
}

// Enabled reports whether tokens are verified at all.
func (a *Settings) Enabled() bool { return len(a.Issuers) > 0 || a.SiteIssuer }

// Defaults fills unset fields with their documented defaults.
func (a *Settings) Defaults() {
	a.X509.defaults(os.Getenv)
	if a.ClockSkew == 0 {
		a.ClockSkew = units.Duration(DefaultClockSkew)
	}
	if a.MaxTokenLifetime == 0 {
		a.MaxTokenLifetime = units.Duration(DefaultMaxLifetime)
	}
	for i := range a.Issuers {
		if a.Issuers[i].BasePath == "" {
			a.Issuers[i].BasePath = "/"
		}
	}
	for i := range a.Namespaces {
		n := &a.Namespaces[i]
		if n.Read == "" {
			n.Read = "public"
		}
		if n.Write == "" {
			n.Write = "token"
		}
		if n.Protection == "" {
			n.Protection = "none"
		}
	}
}

// Validate returns every problem in a, keyed as in the file
// ("auth.issuer[1].url").
func (a *Settings) Validate() []problem.Problem {
	var ps []problem.Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem.Problem{Key: "auth." + key, Msg: fmt.Sprintf(format, args...)})
	}
	// 0 is unset here: a "0s" in the file is the type check's (nonzero).
	if d := a.ClockSkew.D(); d < 0 || d > time.Hour {
		add("clock_skew", "%q is not a positive duration of at most 1h", d.String())
	}
	if d := a.MaxTokenLifetime.D(); d != 0 && (d < time.Minute || d > maxMaxLifetime) {
		add("max_token_lifetime", "%q is not a duration between 1m and %v", d.String(), maxMaxLifetime)
	}
	if a.CA != "" {
		if _, err := os.Stat(a.CA); err != nil {
			add("ca", "cannot read %s: %v", a.CA, problem.PathCause(err))
		}
	}
	if a.IssuerURL != "" {
		if msg := problem.CheckURL(a.IssuerURL, "https", "http"); msg != "" {
			add("issuer_url", "%s", msg)
		}
	}
	for i, is := range a.Issuers {
		key := fmt.Sprintf("issuer[%d]", i+1)
		if is.URL == "" {
			add(key+".url", "missing: the issuer URL, as in the tokens' \"iss\"")
		}
		if is.JWKS != "" {
			if _, err := os.Stat(is.JWKS); err != nil {
				add(key+".jwks", "cannot read %s: %v", is.JWKS, problem.PathCause(err))
			}
		}
		if is.BasePath != "" {
			if c, err := store.CleanPath(is.BasePath); err != nil || c != is.BasePath {
				add(key+".base_path", "%q must be a clean absolute namespace path", is.BasePath)
			}
		}
	}
	ps = append(ps, a.validateVOs()...)
	ps = append(ps, a.Kerberos.validate()...)
	ps = append(ps, a.X509.validate(os.Getenv)...)
	ps = append(ps, a.validateOperators()...)
	seen := map[string]bool{}
	for i, n := range a.Namespaces {
		key := fmt.Sprintf("namespace[%d]", i+1)
		if c, err := store.CleanPath(n.Prefix); n.Prefix == "" || err != nil || c != n.Prefix {
			add(key+".prefix", "%q must be a clean absolute namespace path, e.g. \"/store/cms\"", n.Prefix)
		} else if seen[n.Prefix] {
			add(key+".prefix", "%q has a policy already", n.Prefix)
		}
		seen[n.Prefix] = true
		switch n.Read {
		case "", "public", "token":
		case "vo":
			if len(n.VOs) == 0 {
				add(key+".vos", "read = \"vo\" needs the VOs allowed, e.g. [\"cms\"]")
			}
		default:
			add(key+".read", "%q is not a read rule (use public, token or vo)", n.Read)
		}
		switch n.Write {
		case "", "token", "none":
		default:
			add(key+".write", "%q is not a write rule (use token or none)", n.Write)
		}
		switch n.Protection {
		case "", "none", "integrity", "privacy":
		default:
			add(key+".protection", "%q is not a protection level (use none, integrity or privacy)", n.Protection)
		}
	}
	if len(a.Namespaces) > 0 && !a.Enabled() && !a.Kerberos.Enabled() && a.X509 == nil {
		add("issuer", "namespace policies need a trusted issuer ([[auth.issuer]]), site_issuer = true, [auth.kerberos] or [auth.x509]")
	}
	return ps
}

// validateVOs refuses VO lists no group could match ("/cms" where "cms"
// is meant) and a namespace naming a VO no trusted issuer may assert: no
// token could ever carry it.
func (a *Settings) validateVOs() []problem.Problem {
	var ps []problem.Problem
	asserted := map[string]bool{}
	check := func(key string, vos []string) {
		for _, vo := range vos {
			switch {
			case vo == "" || strings.TrimSpace(vo) != vo || strings.ContainsAny(vo, " \t"):
				ps = append(ps, problem.Problem{Key: key, Msg: fmt.Sprintf("%q is not a VO name (e.g. \"cms\")", vo)})
			case strings.Contains(vo, "/"):
				ps = append(ps, problem.Problem{Key: key, Msg: fmt.Sprintf("%q is a group, not a VO: write %q (the group's first component)", vo, groupVO(vo))})
			}
			asserted[groupVO(vo)] = true // "/cms" is reported once, above
		}
	}
	for i, is := range a.Issuers {
		check(fmt.Sprintf("auth.issuer[%d].vos", i+1), is.VOs)
	}
	if len(a.SiteIssuerVOs) > 0 && !a.SiteIssuer {
		ps = append(ps, problem.Problem{Key: "auth.site_issuer_vos", Msg: "set, but this box is no site issuer (site_issuer = true)"})
	}
	check("auth.site_issuer_vos", a.SiteIssuerVOs)
	check("auth.kerberos.realm.groups", a.Kerberos.kerberosVOs())
	x509VOs, known := a.X509.assertedVOs()
	for _, vo := range x509VOs {
		asserted[vo] = true // the rules' groups are checked with the rules
	}
	// A namespace's VOs gate reads (read = "vo") and token access alike.
	for i, n := range a.Namespaces {
		for _, vo := range n.VOs {
			if !asserted[vo] && !strings.Contains(vo, "/") && known {
				ps = append(ps, problem.Problem{Key: fmt.Sprintf("auth.namespace[%d].vos", i+1),
					Msg: fmt.Sprintf("no trusted issuer may assert VO %q, so no token of that VO reaches %s: add vos = [%q] to the issuer that speaks for it (or site_issuer_vos)%s", vo, n.Prefix, vo, a.X509.missingVOHint(vo))})
			}
		}
	}
	return ps
}

// validateOperators requires each operator to name a subject and an
// issuer this box trusts.
func (a *Settings) validateOperators() []problem.Problem {
	var ps []problem.Problem
	for i, op := range a.Operators {
		key := fmt.Sprintf("auth.operator[%d]", i+1)
		if op.Subject == "" {
			ps = append(ps, problem.Problem{Key: key + ".subject", Msg: "missing: the operator's token subject (sub)"})
		}
		switch {
		case op.Issuer == "" && !a.SiteIssuer:
			ps = append(ps, problem.Problem{Key: key + ".issuer", Msg: "missing: the operator's token issuer (empty means this box's site issuer, but site_issuer is not set)"})
		case strings.HasPrefix(op.Issuer, X509IssuerPrefix) && a.X509 == nil:
			ps = append(ps, problem.Problem{Key: key + ".issuer", Msg: fmt.Sprintf("%q names an X.509 user's CA, but this box takes no X.509 credentials ([auth.x509])", op.Issuer)})
		case op.Issuer != "" && !strings.HasPrefix(op.Issuer, X509IssuerPrefix) && !a.trusts(op.Issuer):
			ps = append(ps, problem.Problem{Key: key + ".issuer", Msg: fmt.Sprintf("%q is not a trusted issuer: list it as an [[auth.issuer]] url, leave it empty for the site issuer, or for an X.509 user write \"x509:\" and the user's CA DN", op.Issuer)})
		}
	}
	return ps
}

// trusts reports whether iss is the url of a configured [[auth.issuer]]
// or the site issuer's configured issuer_url.
func (a *Settings) trusts(iss string) bool {
	iss = strings.TrimSuffix(iss, "/")
	for _, is := range a.Issuers {
		if strings.TrimSuffix(is.URL, "/") == iss {
			return true
		}
	}
	return a.SiteIssuer && a.IssuerURL != "" && strings.TrimSuffix(a.IssuerURL, "/") == iss
}

// Policy builds the namespace policy the [[auth.namespace]] rules describe.
func (a *Settings) Policy() (*Policy, error) {
	var ns []Namespace
	for _, n := range a.Namespaces {
		lvl, err := ParseLevel(n.Protection)
		if err != nil {
			return nil, fmt.Errorf("auth.namespace %s: %w", n.Prefix, err)
		}
		ns = append(ns, Namespace{Prefix: n.Prefix, Read: n.Read, VOs: n.VOs, Write: n.Write, Protection: lvl})
	}
	p, err := NewPolicy(ns)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	return p, nil
}

// maxMaxLifetime bounds [auth] max_token_lifetime: a token valid for
// longer than a year is a credential that never expires in practice.
const maxMaxLifetime = 365 * 24 * time.Hour

// MaxLifetime is [auth] max_token_lifetime (its default when unset).
func (a *Settings) MaxLifetime() time.Duration {
	if a.MaxTokenLifetime == 0 {
		return DefaultMaxLifetime
	}
	return a.MaxTokenLifetime.D()
}

// Skew is [auth] clock_skew; 0 when unset (Defaults not applied), for
// each verifier's own default.
func (a *Settings) Skew() time.Duration { return a.ClockSkew.D() }

// VerifierConfig is the verifier's config for the trusted issuers, all
// but the site issuer, which the box adds once its key is loaded.
func (a *Settings) VerifierConfig() (VerifierConfig, error) {
	vc := VerifierConfig{ClockSkew: a.Skew(), MaxLifetime: a.MaxLifetime()}
	var err error
	if a.CA != "" {
		if vc.HTTPClient, err = tlsutil.HTTPClient(a.CA, false, 10*time.Second); err != nil {
			return VerifierConfig{}, fmt.Errorf("auth.ca: %w", err)
		}
	}
	for _, is := range a.Issuers {
		vc.Issuers = append(vc.Issuers, IssuerConfig{Issuer: is.URL, JWKSFile: is.JWKS, JWKSURL: is.JWKSURL, Audiences: is.Audience, BasePath: is.BasePath, VOs: is.VOs})
	}
	return vc, nil
}
