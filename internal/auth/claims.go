package auth

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/store"
)

// claims are the parts of a WLCG or SciTokens payload sitebox uses.
// jwt.ClaimStrings accepts a string or an array, which real issuers mix.
type claims struct {
	jwt.RegisteredClaims
	Scope      jwt.ClaimStrings `json:"scope"`
	Ver        string           `json:"ver"`      // SciTokens: "scitoken:2.0"
	WLCGVer    string           `json:"wlcg.ver"` // WLCG: "1.0"
	WLCGGroups jwt.ClaimStrings `json:"wlcg.groups"`
	Groups     jwt.ClaimStrings `json:"groups"`
}

// identity checks the time, audience and subject claims of a token whose
// signature is already verified, and builds the identity it proves.
func (c *claims) identity(is *issuer, now time.Time, skew time.Duration) (*store.Identity, error) {
	if c.ExpiresAt == nil {
		return nil, deny("token has no expiry (exp)")
	}
	if now.After(c.ExpiresAt.Add(skew)) {
		return nil, deny("token expired at %s", c.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if c.NotBefore != nil && now.Add(skew).Before(c.NotBefore.Time) {
		return nil, deny("token not valid before %s", c.NotBefore.UTC().Format(time.RFC3339))
	}
	if c.IssuedAt != nil && now.Add(skew).Before(c.IssuedAt.Time) {
		return nil, deny("token issued in the future (iat %s)", c.IssuedAt.UTC().Format(time.RFC3339))
	}
	if !is.acceptsAudience(c.Audience) {
		return nil, deny("token audience %q is not accepted here", []string(c.Audience))
	}
	if c.Subject == "" {
		return nil, deny("token has no subject (sub)")
	}
	scopes, err := c.scopes(is.cfg.BasePath)
	if err != nil {
		return nil, err
	}
	id := &store.Identity{Subject: c.Subject, Issuer: c.Issuer, Scopes: scopes, Expires: c.ExpiresAt.Time}
	for _, g := range slices.Concat(c.WLCGGroups, c.Groups) {
		if g != "" && !slices.Contains(id.Groups, g) {
			id.Groups = append(id.Groups, g)
		}
	}
	return id, nil
}

// keepAuthoritativeGroups removes from id the groups whose VO the issuer
// may not assert (see IssuerConfig.VOs) and returns them.
func (is *issuer) keepAuthoritativeGroups(id *store.Identity) (dropped []string) {
	var kept []string
	for _, g := range id.Groups {
		if slices.Contains(is.cfg.VOs, groupVO(g)) {
			kept = append(kept, g)
		} else {
			dropped = append(dropped, g)
		}
	}
	id.Groups = kept
	return dropped
}

// groupVO is the VO a group names: its first component ("/cms/prod" →
// "cms"), "" for a group that names none.
func groupVO(g string) string {
	vo, _, _ := strings.Cut(strings.TrimPrefix(g, "/"), "/")
	return vo
}

// acceptsAudience applies the rule documented on IssuerConfig.Audiences.
func (is *issuer) acceptsAudience(aud jwt.ClaimStrings) bool {
	if len(aud) == 0 {
		return true
	}
	for _, a := range aud {
		if a == AnyAudience || slices.Contains(is.cfg.Audiences, a) {
			return true
		}
	}
	return false
}

// scopeOps maps a scope name to store scope operations: the WLCG names
// always, the SciTokens ones (write covers creating and changing) when
// sci is set; nil for scopes that are not about storage.
func scopeOps(name string, sci bool) []string {
	switch name {
	case "storage.read":
		return []string{store.ScopeRead}
	case "storage.create":
		return []string{store.ScopeCreate}
	case "storage.modify":
		return []string{store.ScopeModify}
	case "storage.stage":
		return []string{store.ScopeStage}
	case store.ScopeComputeCreate, store.ScopeComputeRead, store.ScopeComputeModify, store.ScopeComputeCancel:
		return []string{name}
	}
	if !sci {
		return nil
	}
	switch name {
	case "read":
		return []string{store.ScopeRead}
	case "write":
		return []string{store.ScopeCreate, store.ScopeModify}
	}
	return nil
}

// scopes turns the scope claim into store scopes rooted at base. Scopes
// of other kinds (openid, offline_access) are ignored; compute.* scopes
// are kept by name (their path, if any, is not used). SciTokens names (read:,
// write:) count only in tokens that are not WLCG tokens and whose ver is
// "scitoken:2.0" or absent (SciTokens 1.0 had none). A storage scope with
// an unsafe path refuses the whole token: silently dropping it would
// leave the user puzzling over a permission error.
func (c *claims) scopes(base string) ([]store.Scope, error) {
	sci := c.WLCGVer == "" && (c.Ver == "" || c.Ver == "scitoken:2.0")
	var out []store.Scope
	for _, field := range c.Scope {
		for _, s := range strings.Fields(field) {
			name, p, hasPath := strings.Cut(s, ":")
			ops := scopeOps(name, sci)
			if ops == nil {
				continue
			}
			if !hasPath {
				p = "/"
			}
			full, err := joinScopePath(base, p)
			if err != nil {
				return nil, deny("token scope %q: %v", s, err)
			}
			for _, op := range ops {
				sc := store.Scope{Op: op, Path: full}
				if !slices.Contains(out, sc) {
					out = append(out, sc)
				}
			}
		}
	}
	return out, nil
}

// joinScopePath roots a scope path at base. The path must be absolute and
// clean (one trailing slash is tolerated, "/cms/" is common): "..", ".",
// "//" and control bytes are refused, so no spelling escapes base.
func joinScopePath(base, p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	if c, err := store.CleanPath(p); err != nil || c != p {
		return "", fmt.Errorf("path %q is not a clean absolute path", p)
	}
	switch {
	case base == "/":
		return p, nil
	case p == "/":
		return base, nil
	}
	return base + p, nil
}
