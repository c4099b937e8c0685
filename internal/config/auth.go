package config

import (
	"fmt"
	"os"
	"time"

	"sitebox/internal/store"
)

// Auth configures bearer tokens: which issuers the box trusts and what
// each namespace requires. A box without [[auth.namespace]] serves every
// path as before (public, writable where exported).
type Auth struct {
	// Issuers are the token issuers trusted here.
	Issuers []AuthIssuer `toml:"issuer"`
	// ClockSkew allowed on exp, nbf and iat (default "60s").
	ClockSkew string `toml:"clock_skew"`
	// CA is a PEM file of extra CA certificates trusted when fetching
	// issuers' keys over https (another box's self-signed certificate).
	CA string `toml:"ca"`
	// SiteIssuer makes this box a token issuer of its own: it serves its
	// JWKS and OpenID configuration over https://, and trusts its own
	// tokens. `sitebox token keygen` makes the key (in state_dir/issuer).
	SiteIssuer bool `toml:"site_issuer"`
	// IssuerURL is the site issuer's `iss` (default: https://<hostname>:<https port>).
	IssuerURL string `toml:"issuer_url"`
	// Namespaces hold the policy per namespace prefix; the longest
	// matching prefix applies.
	Namespaces []AuthNamespace `toml:"namespace"`
}

// AuthIssuer is one trusted token issuer.
type AuthIssuer struct {
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
}

// AuthNamespace is the policy of one namespace prefix.
type AuthNamespace struct {
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
func (a *Auth) Enabled() bool { return len(a.Issuers) > 0 || a.SiteIssuer }

func (a *Auth) applyDefaults() {
	if a.ClockSkew == "" {
		a.ClockSkew = "60s"
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

func (a *Auth) validate() []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: "auth." + key, Msg: fmt.Sprintf(format, args...)})
	}
	if a.ClockSkew != "" {
		if d, err := time.ParseDuration(a.ClockSkew); err != nil || d < 0 || d > time.Hour {
			add("clock_skew", "%q is not a duration between 0 and 1h", a.ClockSkew)
		}
	}
	if a.CA != "" {
		if _, err := os.Stat(a.CA); err != nil {
			add("ca", "cannot read %s: %v", a.CA, unwrapPath(err))
		}
	}
	if a.IssuerURL != "" {
		if msg := checkURL(a.IssuerURL, "https", "http"); msg != "" {
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
				add(key+".jwks", "cannot read %s: %v", is.JWKS, unwrapPath(err))
			}
		}
		if is.BasePath != "" {
			if c, err := store.CleanPath(is.BasePath); err != nil || c != is.BasePath {
				add(key+".base_path", "%q must be a clean absolute namespace path", is.BasePath)
			}
		}
	}
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
	if len(a.Namespaces) > 0 && !a.Enabled() {
		add("issuer", "namespace policies need a trusted issuer ([[auth.issuer]]) or site_issuer = true")
	}
	return ps
}
