package auth

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/store"
)

// claims are the parts of a WLCG or SciTokens payload sitebox uses.
// jwt.ClaimStrings accepts a string or an array, which real issuers mix.
// The dates are numericDate, not jwt.NumericDate: that one also takes a
// string holding a number, which RFC 7519 does not allow.
type claims struct {
	Issuer     string           `json:"iss"`
	Subject    string           `json:"sub"`
	Audience   jwt.ClaimStrings `json:"aud"`
	ExpiresAt  numericDate      `json:"exp"`
	NotBefore  numericDate      `json:"nbf"`
	IssuedAt   numericDate      `json:"iat"`
	Scope      jwt.ClaimStrings `json:"scope"`
	Ver        string           `json:"ver"`      // SciTokens: "scitoken:2.0"
	WLCGVer    string           `json:"wlcg.ver"` // WLCG: "1.0"
	WLCGGroups jwt.ClaimStrings `json:"wlcg.groups"`
	Groups     jwt.ClaimStrings `json:"groups"`
}

// limits are the verifier's bounds on a token's dates.
type limits struct {
	skew        time.Duration // tolerance on exp, nbf and iat
	maxLifetime time.Duration // longest validity accepted
}

// identity checks the time, audience and subject claims of a token whose
// signature is already verified, and builds the identity it proves.
func (c *claims) identity(is *issuer, now time.Time, lim limits) (*store.Identity, error) {
	if err := c.checkDates(now, lim); err != nil {
		return nil, err
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

// checkDates applies exp, nbf and iat, and the longest lifetime this box
// accepts: tokens cannot be revoked, so one valid for years is a leak
// that never heals. The lifetime counts from iat (else nbf) to exp, and
// what is left of it from now, so a token without iat is bounded too.
func (c *claims) checkDates(now time.Time, lim limits) error {
	for _, d := range []struct {
		name string
		date numericDate
	}{{"exp", c.ExpiresAt}, {"nbf", c.NotBefore}, {"iat", c.IssuedAt}} {
		if d.date.invalid {
			return deny("token claim %q is not a NumericDate (a JSON number of seconds): %s", d.name, d.date.raw)
		}
	}
	if !c.ExpiresAt.set {
		return deny("token has no expiry (exp)")
	}
	exp := c.ExpiresAt.Time
	if now.After(exp.Add(lim.skew)) {
		return deny("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if c.NotBefore.set && now.Add(lim.skew).Before(c.NotBefore.Time) {
		return deny("token not valid before %s", c.NotBefore.UTC().Format(time.RFC3339))
	}
	if c.IssuedAt.set && now.Add(lim.skew).Before(c.IssuedAt.Time) {
		return deny("token issued in the future (iat %s)", c.IssuedAt.UTC().Format(time.RFC3339))
	}
	start, from := c.IssuedAt, "iat"
	if !start.set {
		start, from = c.NotBefore, "nbf"
	}
	if life := exp.Sub(start.Time); start.set && life > lim.maxLifetime {
		return deny("token lifetime %v (%s to exp) is over the %v this box accepts ([auth] max_token_lifetime)",
			life.Round(time.Second), from, lim.maxLifetime)
	}
	if left := exp.Sub(now); left > lim.maxLifetime+lim.skew {
		return deny("token is valid for another %v, over the %v this box accepts ([auth] max_token_lifetime)",
			left.Round(time.Minute), lim.maxLifetime)
	}
	return nil
}

// numericDate is an RFC 7519 NumericDate: a JSON number of seconds since
// 1970, possibly with a fraction. Anything else (a string, null, a
// number beyond year 9999) is kept as invalid, for identity to refuse
// with the claim's name: services must not differ on what a token says.
type numericDate struct {
	time.Time
	set, invalid bool
	raw          string // an invalid value as sent, shortened
}

// maxNumericDate is 9999-12-31T23:59:59Z.
const maxNumericDate = 253402300799

func (d *numericDate) UnmarshalJSON(b []byte) error {
	*d = numericDate{set: true}
	if len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
		// Valid JSON starting so is a JSON number, which ParseFloat reads.
		if f, err := strconv.ParseFloat(string(b), 64); err == nil && f >= 0 && f <= maxNumericDate {
			sec, frac := math.Modf(f)
			d.Time = time.Unix(int64(sec), int64(frac*1e9))
			return nil
		}
	}
	d.invalid, d.raw = true, abbrev(string(b), 40)
	return nil
}

// abbrev shortens s to n bytes for a message.
func abbrev(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// The jwt.Claims methods. The parser is told not to validate (identity
// does), so they only make claims acceptable to it.
func (c *claims) GetExpirationTime() (*jwt.NumericDate, error) { return c.ExpiresAt.jwt(), nil }
func (c *claims) GetNotBefore() (*jwt.NumericDate, error)      { return c.NotBefore.jwt(), nil }
func (c *claims) GetIssuedAt() (*jwt.NumericDate, error)       { return c.IssuedAt.jwt(), nil }
func (c *claims) GetIssuer() (string, error)                   { return c.Issuer, nil }
func (c *claims) GetSubject() (string, error)                  { return c.Subject, nil }
func (c *claims) GetAudience() (jwt.ClaimStrings, error)       { return c.Audience, nil }

func (d numericDate) jwt() *jwt.NumericDate {
	if !d.set || d.invalid {
		return nil
	}
	return jwt.NewNumericDate(d.Time)
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
