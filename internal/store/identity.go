package store

import (
	"context"
	"strings"
	"time"
)

// Identity is who a client proved to be: the claims of a verified bearer
// token (WLCG or SciTokens JWT). Frontends verify the token and carry the
// identity in the Request; the namespace policy and the director's VO
// fallback read it. A nil *Identity is an anonymous client.
type Identity struct {
	Subject string
	Issuer  string
	// Groups are the token's wlcg.groups ("/cms", "/cms/production").
	Groups []string
	// Scopes are the storage permissions the token grants, with paths
	// already joined to the issuer's base path.
	Scopes  []Scope
	Expires time.Time
	// FQANs are an X.509 identity's VOMS attributes as the VOMS server
	// wrote them ("/cms/Role=production/Capability=NULL"), the primary
	// first: what the access log records beside the DN, as roles are
	// not groups. Tokens have none.
	FQANs []string
}

// TokenVerifier checks a bearer token and says who it identifies; the
// error names why a token is refused. The frontends take one to verify
// the tokens their clients present.
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
