package auth

import (
	"fmt"
	"slices"
	"strings"

	"sitebox/internal/store"
)

// Level is how a namespace's bytes must be protected on the wire.
type Level int

const (
	// LevelNone: plain root:// and http:// are fine.
	LevelNone Level = iota
	// LevelIntegrity: data must not be altered unseen — TLS, or per-page
	// checksums (kXR_pgread); the frontends enforce it (see Guard.Open).
	LevelIntegrity
	// LevelPrivacy: data must be encrypted, so only TLS requests pass.
	LevelPrivacy
)

// ParseLevel reads "none" (or ""), "integrity" or "privacy".
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return LevelNone, nil
	case "integrity":
		return LevelIntegrity, nil
	case "privacy":
		return LevelPrivacy, nil
	}
	return LevelNone, fmt.Errorf("parse protection level %q: want none, integrity or privacy", s)
}

func (l Level) String() string {
	switch l {
	case LevelNone:
		return "none"
	case LevelIntegrity:
		return "integrity"
	case LevelPrivacy:
		return "privacy"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Read and Write modes of a Namespace.
const (
	ReadPublic = "public" // anyone reads
	ReadToken  = "token"  // a token with a read scope covering the path
	ReadVO     = "vo"     // a token whose groups name one of the VOs (only an issuer trusted for a VO asserts it: IssuerConfig.VOs)
	WriteNone  = "none"   // nobody changes anything
	WriteToken = "token"  // a token with create/modify scope covering the path
)

// Namespace is the access rule of a path prefix.
type Namespace struct {
	Prefix string // clean absolute path
	// Read is ReadPublic, ReadToken or ReadVO; "" means ReadToken.
	Read string
	// VOs are the virtual organisations allowed (required by ReadVO).
	// When set, token reads and writes also need one of them.
	VOs []string
	// Write is WriteNone or WriteToken; "" means WriteToken.
	Write      string
	Protection Level
}

// Policy decides who may do what where: the namespace with the longest
// matching prefix rules. Paths under no namespace are readable by anyone
// and writable with a covering token scope. A Policy with no namespaces
// allows everything, so a box without an [auth] section behaves as
// before. It is immutable and safe for concurrent use.
type Policy struct {
	ns store.PrefixTable[Namespace] // longest prefix first
}

// NewPolicy validates ns and builds a Policy from it.
func NewPolicy(ns []Namespace) (*Policy, error) {
	p := &Policy{}
	seen := map[string]bool{}
	for _, n := range ns {
		c, err := store.CleanPath(n.Prefix)
		if err != nil || c != n.Prefix {
			return nil, fmt.Errorf("new policy: namespace prefix %q must be a clean absolute path", n.Prefix)
		}
		if seen[c] {
			return nil, fmt.Errorf("new policy: namespace %s configured twice", c)
		}
		seen[c] = true
		if n.Read == "" {
			n.Read = ReadToken
		}
		if n.Write == "" {
			n.Write = WriteToken
		}
		switch n.Read {
		case ReadPublic, ReadToken, ReadVO:
		default:
			return nil, fmt.Errorf("new policy: namespace %s: read %q: want public, token or vo", c, n.Read)
		}
		if n.Write != WriteNone && n.Write != WriteToken {
			return nil, fmt.Errorf("new policy: namespace %s: write %q: want none or token", c, n.Write)
		}
		if n.Read == ReadVO && len(n.VOs) == 0 {
			return nil, fmt.Errorf("new policy: namespace %s: read = vo needs a VO list", c)
		}
		if err := CheckVOs(n.VOs); err != nil {
			return nil, fmt.Errorf("new policy: namespace %s: %w", c, err)
		}
		if n.Protection < LevelNone || n.Protection > LevelPrivacy {
			return nil, fmt.Errorf("new policy: namespace %s: bad protection %v", c, n.Protection)
		}
		n.VOs = slices.Clone(n.VOs)
		p.ns.Add(n.Prefix, n)
	}
	return p, nil
}

// AllowsAll reports whether the policy has no namespaces and so allows
// everything (a box without an [auth] section).
func (p *Policy) AllowsAll() bool { return p == nil || p.ns.Len() == 0 }

// lookup returns the namespace ruling name, or the default one.
func (p *Policy) lookup(name string) Namespace {
	if n, ok := p.ns.Lookup(name); ok {
		return n
	}
	return Namespace{Prefix: "/", Read: ReadPublic, Write: WriteToken}
}

// Protection is the wire protection name (a clean path) needs.
func (p *Policy) Protection(name string) Level {
	if p.AllowsAll() {
		return LevelNone
	}
	return p.lookup(name).Protection
}

// Check reports whether the request r may do op on name (a clean path):
// op is store.ScopeRead, store.ScopeCreate (a new file or directory) or
// store.ScopeModify (change, overwrite, delete, rename, chmod). WLCG
// makes storage.modify a superset of storage.create, so a modify scope
// also grants create. Only the identity's groups count for VO checks,
// never the client-chosen ?vo=. A request whose credential was refused
// (AuthError) is denied everything with that reason. A refusal is a *Denied saying
// why.
func (p *Policy) Check(r *store.Request, op, name string) error {
	_, err := p.Decide(r, op, name)
	return err
}

// Decide is Check that also returns the protection name needs (as
// Protection), from the one look-up of the namespace ruling it: the
// guard's Open needs both.
func (p *Policy) Decide(r *store.Request, op, name string) (Level, error) {
	if p.AllowsAll() {
		return LevelNone, nil
	}
	n := p.lookup(name)
	return n.Protection, p.check(r, op, name, n)
}

// check is Check's decision for name, ruled by n.
func (p *Policy) check(r *store.Request, op, name string, n Namespace) error {
	if r.Identity == nil && r.AuthError != nil {
		// A client whose token was refused learns why at once, even on a
		// public path, instead of getting anonymous access it did not ask
		// for (and a puzzling "no token" where a token is needed).
		return &Denied{Reason: r.AuthError.Error(), Cause: r.AuthError}
	}
	if n.Protection == LevelPrivacy && !r.TLS {
		d := deny("%s requires TLS (privacy): use roots:// or https://", n.Prefix)
		d.Cause = store.ErrInsecure
		return d
	}
	if err := checkCopyPeer(r.CopyPeer, n); err != nil {
		return err
	}
	id := r.Identity
	if op == store.ScopeRead {
		switch n.Read {
		case ReadPublic:
			return nil
		case ReadToken:
			if id == nil {
				return needToken("%s requires a bearer token (read)", name)
			}
			if err := checkVO(id, n, "read", name); err != nil {
				return err
			}
			return checkScope(id, op, name)
		default: // ReadVO: groups grant, a token's scopes (if any) narrow
			if id == nil {
				return needToken("%s requires a bearer token (read)", name)
			}
			if err := checkVO(id, n, "read", name); err != nil {
				return err
			}
			if len(id.Scopes) == 0 || siteMapped(id) {
				return nil
			}
			return checkScope(id, op, name)
		}
	}
	if n.Write == WriteNone {
		return deny("%s is read-only", n.Prefix)
	}
	if id == nil {
		return needToken("%s requires a bearer token (%s)", name, op)
	}
	if err := checkVO(id, n, "write", name); err != nil {
		return err
	}
	return checkScope(id, op, name)
}

// checkCopyPeer refuses the local end of a third-party copy whose other
// server is reached unencrypted when n is protected. Privacy: the bytes
// never travel in clear. Integrity: a copy has no per-page checksums
// (HTTP has none, and the box's root:// client reads with kXR_read), and
// the adler32 it compares at the end comes over the same plain
// connection, so only TLS keeps the bytes from being altered unseen.
func checkCopyPeer(peer *store.CopyPeer, n Namespace) error {
	if peer == nil || peer.TLS || n.Protection == LevelNone {
		return nil
	}
	d := deny("%s requires %s: a third-party copy with %s would move its data unencrypted; use an https:// or roots:// URL for the other server",
		n.Prefix, protectionName(n.Protection), peer.URL)
	d.Cause = store.ErrInsecure
	return d
}

func protectionName(l Level) string {
	if l == LevelPrivacy {
		return "TLS (privacy)"
	}
	return "integrity protection"
}

// checkVO requires one of the identity's VOs to be in n.VOs, if set;
// the refusal speaks of what the identity was proven with.
func checkVO(id *store.Identity, n Namespace, verb, name string) error {
	if len(n.VOs) == 0 {
		return nil
	}
	vos := id.VOs()
	for _, vo := range vos {
		if slices.Contains(n.VOs, vo) {
			return nil
		}
	}
	if len(vos) == 0 && id.Is(MethodX509) {
		if len(id.Ignored) > 0 {
			// The proxy had attributes: say why they did not count, or the
			// user is told to get what they already hold.
			return deny("certificate of %s has no VOMS attributes of %s, which alone may %s %s: %s",
				id.Subject, strings.Join(n.VOs, " or "), verb, name, strings.Join(id.Ignored, "; "))
		}
		return deny("certificate of %s has no VOMS attributes of %s, which alone may %s %s (a VOMS proxy is needed: voms-proxy-init --voms %s, "+
			"its attribute certificate from a VOMS server the box's vomsdir lists for the VO)", id.Subject, strings.Join(n.VOs, " or "), verb, name, n.VOs[0])
	}
	if len(vos) == 0 {
		// Groups the issuer is not trusted for were dropped at
		// verification: say so, or a user holding "/cms" is left puzzled.
		return deny("token has no VO groups: %s may %s %s (groups count only from an issuer trusted for their VO; this token is from %s)",
			strings.Join(n.VOs, ", "), verb, name, id.Issuer)
	}
	return deny("VO %s may not %s %s (allowed: %s)", strings.Join(vos, ","), verb, name, strings.Join(n.VOs, ", "))
}

// checkScope requires a scope granting op on name: a token's, or one a
// site mapping grants (the refusal says which).
func checkScope(id *store.Identity, op, name string) error {
	if id.Allows(op, name) || op == store.ScopeCreate && id.Allows(store.ScopeModify, name) {
		return nil
	}
	if op == store.ScopeModify && id.Allows(store.ScopeCreate, name) {
		return deny("token has no storage.modify scope for %s (its storage.create scope allows only new files: "+
			"replacing, moving or deleting one needs storage.modify)", name)
	}
	if op != store.ScopeRead && id.Allows(store.ScopeRead, name) {
		return deny("read scope used for a write: no storage.%s scope for %s", op, name)
	}
	var have []string
	for _, s := range id.Scopes {
		if s.Op == op || op == store.ScopeCreate && s.Op == store.ScopeModify {
			have = append(have, s.Path)
		}
	}
	has := "it has none"
	if len(have) > 0 {
		has = "it has " + strings.Join(have, ", ")
	}
	if id.Is(MethodX509) {
		return deny("no [auth.x509] mapping gives %s the storage.%s scope for %s (%s; a limited proxy has read scopes only)", id.Subject, op, name, has)
	}
	return deny("token has no storage.%s scope for %s (%s)", op, name, has)
}

// siteMapped reports whether id's groups and scopes are what the site's
// own mapping grants (a Kerberos realm, an X.509 rule) rather than what
// a token's holder chose to delegate: such scopes are grants beside the
// groups, never a narrowing of what the groups allow.
func siteMapped(id *store.Identity) bool {
	return id.Is(MethodX509) || id.Is(MethodKrb5)
}
