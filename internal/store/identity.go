package store

import (
	"context"
	"strings"
	"time"
)

// Identity is who a client proved to be, and how: a verified bearer
// token (WLCG or SciTokens JWT), Kerberos ticket or X.509 chain, as
// auth.Authenticator turns a credential into one. Frontends carry it in
// the Request; the namespace policy, the director's VO fallback, the
// logs and the jobs read it. A nil *Identity is an anonymous client.
type Identity struct {
	// Method is how the identity was proven (auth.MethodToken,
	// MethodKrb5, MethodX509, set by auth.Authenticator): code that
	// treats credentials differently asks it, never the form of the
	// issuer.
	Method  string
	Subject string // the token's sub, the mapped Kerberos user, the X.509 DN
	// Issuer vouches for Subject: the token's iss, "krb5:" and the realm,
	// "x509:" and the user's CA. The pair names one person.
	Issuer string
	// Groups are the token's wlcg.groups ("/cms", "/cms/production"),
	// a realm's or a mapping rule's groups, or the VOMS groups.
	Groups []string
	// FQANs are the VOMS attributes of an X.509 identity, in the order
	// VOMS issued them, the primary first
	// ("/cms/Role=production/Capability=NULL"), from the attribute
	// certificates accepted: the access log records them beside the DN,
	// as roles are not groups. Tokens have none.
	FQANs []string
	// Ignored says what of the credential was not taken although the
	// credential was (a VOMS attribute certificate of a server the
	// vomsdir does not list), for refusals to explain.
	Ignored []string
	// Scopes are the storage permissions the token grants, with paths
	// already joined to the issuer's base path.
	Scopes  []Scope
	Expires time.Time
}

// Is reports whether id was proven with method; a nil id (anonymous)
// was proven with none.
func (id *Identity) Is(method string) bool { return id != nil && id.Method == method }

// TokenVerifier checks a bearer token and says who it identifies; the
// error names why a token is refused. The authenticator (auth) takes one
// to verify the tokens clients present.
type TokenVerifier interface {
	Verify(ctx context.Context, raw string) (*Identity, error)
}

// Scope operations, as WLCG names them (SciTokens read: and write: map
// to read and to create+modify).
const (
	ScopeRead   = "read"   // storage.read
	ScopeCreate = "create" // storage.create: new files and directories
	ScopeModify = "modify" // storage.modify: change, overwrite, delete, rename
	ScopeStage  = "stage"  // storage.stage
)

// Compute scope operations (WLCG compute.*): who may submit, see, change
// and cancel jobs. They carry no path; a token holds them or not.
const (
	ScopeComputeCreate = "compute.create"
	ScopeComputeRead   = "compute.read"
	ScopeComputeModify = "compute.modify"
	ScopeComputeCancel = "compute.cancel"
)

// Scope is one storage permission: Op on Path and everything below it.
type Scope struct {
	Op   string
	Path string // clean absolute path
}

// VOs are the virtual organisations of the identity's groups: the first
// component of each ("/cms/production" → "cms"), in order, without
// repeats.
func (id *Identity) VOs() []string {
	if id == nil {
		return nil
	}
	var out []string
	for _, g := range id.Groups {
		vo, _, _ := strings.Cut(strings.TrimPrefix(g, "/"), "/")
		if vo == "" {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == vo
		}
		if !dup {
			out = append(out, vo)
		}
	}
	return out
}

// HasCompute reports whether the identity holds the compute scope op
// (one of the ScopeCompute* names).
func (id *Identity) HasCompute(op string) bool {
	if id == nil {
		return false
	}
	for _, s := range id.Scopes {
		if s.Op == op {
			return true
		}
	}
	return false
}

// Allows reports whether a scope grants op on name (a clean absolute
// path): a scope path covers itself and what lies below it by whole path
// components, so /store/a covers /store/a/x but not /store/ab.
func (id *Identity) Allows(op, name string) bool {
	if id == nil {
		return false
	}
	for _, s := range id.Scopes {
		if s.Op == op && HasPrefix(name, s.Path) {
			return true
		}
	}
	return false
}
