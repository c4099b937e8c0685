package auth

import (
	"path"
	"slices"
	"strings"

	"sitebox/internal/krb5auth"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// x509Rule is one mapping: an [[auth.x509.map]] entry or a mapfile line.
// It matches a user whose DN is dn (any, if empty) and who holds an FQAN
// matching fqan (if set); it then grants groups and scopes and may name
// the local user.
type x509Rule struct {
	dn     string
	fqan   *fqanPattern
	user   string
	groups []string
	scopes []scopeTemplate
}

// scopeTemplate is a parsed WLCG scope whose path may hold {user}.
type scopeTemplate struct {
	op, path string
}

// parseScopes reads WLCG scopes as Kerberos realms write them.
func parseScopes(scopes []string) ([]scopeTemplate, error) {
	var out []scopeTemplate
	for _, s := range scopes {
		op, p, err := krb5auth.ParseScope(s)
		if err != nil {
			return nil, err
		}
		out = append(out, scopeTemplate{op: op, path: p})
	}
	return out, nil
}

// expand gives the scopes for a local user ("" for none: a scope naming
// {user} is then dropped, as it names nobody's directory).
func (s scopeTemplate) expand(user string) (store.Scope, bool) {
	if s.path == "" {
		return store.Scope{Op: s.op}, true // a compute scope
	}
	if strings.Contains(s.path, krb5auth.UserPlaceholder) {
		if user == "" {
			return store.Scope{}, false
		}
		return store.Scope{Op: s.op, Path: path.Clean(strings.ReplaceAll(s.path, krb5auth.UserPlaceholder, user))}, true
	}
	return store.Scope{Op: s.op, Path: s.path}, true
}

// x509Mapping is every rule, parsed once: the [[auth.x509.map]] entries
// in order, then the mapfiles' lines (the grid-mapfile's, then the VOMS
// mapfile's).
type x509Mapping struct {
	rules []x509Rule
	// dnUsers holds the mapfiles' DN lines (the first line of a DN
	// counts), which may be thousands: looked up, not scanned.
	dnUsers map[string]string
	// mappedScopes go to every user a rule names a local user for.
	mappedScopes []scopeTemplate
}

// holder is what a verified chain says of its user, as rules match it.
type holder struct {
	dn    string
	fqans [][]string // full forms, in the order VOMS issued them
}

func holderOf(res *x509grid.Result) holder {
	h := holder{dn: res.Subject}
	for _, vo := range res.VOs {
		for _, f := range vo.FQANs {
			h.fqans = append(h.fqans, fullFQAN(f))
		}
	}
	return h
}

// matches reports whether r applies to h; with fqan set, whether r
// applies for that one FQAN.
func (r *x509Rule) matches(h holder, fqan []string) bool {
	if r.dn != "" && r.dn != h.dn {
		return false
	}
	if r.fqan == nil {
		return true
	}
	if fqan != nil {
		return r.fqan.matches(fqan)
	}
	return slices.ContainsFunc(h.fqans, r.fqan.matches)
}

// localUser is the local user a rule names for h: by DN first (the
// [[auth.x509.map]] rules naming a DN and no FQAN, then the mapfiles' DN
// lines), else by FQAN, the primary first, each with the first rule or
// mapfile line that matches it (XRootD's order: grid-mapfile, then VOMS
// mapfile). "" when none does.
func (m *x509Mapping) localUser(h holder) string {
	if u := m.userByDN(h.dn); u != "" {
		return u
	}
	for _, f := range h.fqans {
		for i := range m.rules {
			if r := &m.rules[i]; r.user != "" && r.fqan != nil && r.matches(h, f) {
				return r.user
			}
		}
	}
	return ""
}

// userByDN is the local user a DN rule or DN mapfile line names for dn.
func (m *x509Mapping) userByDN(dn string) string {
	for i := range m.rules {
		if r := &m.rules[i]; r.user != "" && r.fqan == nil && r.dn == dn {
			return r.user
		}
	}
	return m.dnUsers[dn]
}

// identity is what the mapping makes of a verified chain: the DN under
// "x509:" and its CA (whatever local user a map names: a DN is one
// person, a local user may be an account several share), the FQAN
// groups of the VOs the vomsdir vouches for and the groups of every
// matching rule, and the scopes of every matching rule (with the mapped
// scopes when a local user is named). A limited proxy keeps only read
// scopes.
func (m *x509Mapping) identity(res *x509grid.Result) *store.Identity {
	id := &store.Identity{Subject: res.Subject, Issuer: X509IssuerPrefix + res.Issuer, Expires: res.Expires, Groups: res.Groups()}
	for _, vo := range res.VOs {
		for _, f := range vo.FQANs {
			id.FQANs = append(id.FQANs, f.Value)
		}
	}
	if len(res.RejectedACs) > 0 {
		var why []string
		for _, ac := range res.RejectedACs {
			why = append(why, ac.Error())
		}
		id.Ignored = []string{"VOMS attributes not accepted: " + strings.Join(why, "; ")}
	}
	h := holderOf(res)
	user := m.localUser(h)
	var scopes []scopeTemplate
	for i := range m.rules {
		if r := &m.rules[i]; r.matches(h, nil) {
			for _, g := range r.groups {
				if !slices.Contains(id.Groups, g) {
					id.Groups = append(id.Groups, g)
				}
			}
			scopes = append(scopes, r.scopes...)
		}
	}
	if user != "" {
		scopes = append(scopes, m.mappedScopes...)
	}
	for _, t := range scopes {
		s, ok := t.expand(user)
		if !ok || res.Limited && s.Op != store.ScopeRead || slices.Contains(id.Scopes, s) {
			continue
		}
		id.Scopes = append(id.Scopes, s)
	}
	return id
}
