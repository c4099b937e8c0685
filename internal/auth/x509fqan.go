package auth

import (
	"fmt"
	"strings"

	"sitebox/internal/x509grid"
)

// fqanPattern is an FQAN a mapping rule or a VOMS mapfile line matches,
// as XRootD's voms.mapfile writes them: "/cms/Role=production", "/cms/*"
// (the VO and anything below it), "/fermilab/*/Role=pilot" (any one
// subgroup). Both it and the FQANs it is matched with are compared in
// their full form, "/group/Role=R/Capability=C" with NULL for none, so
// "/cms" (VOMS' short form) means the group /cms without a role and
// "/cms/Role=production" the role in any capability-less FQAN.
type fqanPattern struct {
	text  string   // as written
	parts []string // the full form's components, each literal or with '*'
	// rest: the pattern ended in "/*" and matches any further components
	// (none included).
	rest bool
}

// parseFQANPattern reads a pattern, refusing what no FQAN could match
// and what VOMS does not write: white space, non-ASCII, empty or "."
// components, "=" in a group, a capability before the role.
func parseFQANPattern(s string) (fqanPattern, error) {
	p := fqanPattern{text: s}
	if !strings.HasPrefix(s, "/") {
		return p, fmt.Errorf("FQAN %q: want /vo[/group…][/Role=role], e.g. \"/cms/Role=production\" or \"/cms/*\"", s)
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c > '~' {
			return p, fmt.Errorf("FQAN %q: only printable ASCII without spaces, as VOMS writes FQANs", s)
		}
	}
	body := s
	if body == "/*" {
		return fqanPattern{text: s, rest: true}, nil
	}
	if strings.HasSuffix(body, "/*") {
		p.rest, body = true, strings.TrimSuffix(body, "/*")
	}
	group, role, capability := body, "", ""
	hasRole, hasCap := false, false
	if i := strings.Index(group, "/Capability="); i >= 0 {
		group, capability, hasCap = group[:i], group[i+len("/Capability="):], true
	}
	if i := strings.Index(group, "/Role="); i >= 0 {
		group, role, hasRole = group[:i], group[i+len("/Role="):], true
	}
	if strings.ContainsAny(role, "/=") || strings.ContainsAny(capability, "/=") || hasRole && role == "" || hasCap && capability == "" {
		return p, fmt.Errorf("FQAN %q: a role and a capability come last, in that order, each with a value (Role=NULL for none)", s)
	}
	for _, c := range strings.Split(strings.TrimPrefix(group, "/"), "/") {
		if c == "" || c == "." || c == ".." || strings.Contains(c, "=") {
			return p, fmt.Errorf("FQAN %q: group %q has an empty or invalid component (\"=\" only in Role= and Capability=)", s, group)
		}
		p.parts = append(p.parts, c)
	}
	// The full form: what VOMS omits is NULL, unless the pattern leaves
	// the rest open ("/cms/Role=production/*": any capability).
	if hasRole || !p.rest {
		p.parts = append(p.parts, "Role="+orNULL(role))
	}
	if hasCap || !p.rest {
		p.parts = append(p.parts, "Capability="+orNULL(capability))
	}
	return p, nil
}

func orNULL(s string) string {
	if s == "" {
		return "NULL"
	}
	return s
}

// fullFQAN is f's components in the full form patterns are matched with.
func fullFQAN(f x509grid.FQAN) []string {
	parts := strings.Split(strings.TrimPrefix(f.Group, "/"), "/")
	return append(parts, "Role="+orNULL(f.Role), "Capability="+orNULL(f.Capability))
}

// matches reports whether the FQAN (its full form's components) is one
// the pattern names.
func (p fqanPattern) matches(full []string) bool {
	if len(full) < len(p.parts) || !p.rest && len(full) != len(p.parts) {
		return false
	}
	for i, want := range p.parts {
		if !globMatch(want, full[i]) {
			return false
		}
	}
	return true
}

// vo is the VO the pattern is of ("" when a wildcard stands for it).
func (p fqanPattern) vo() string {
	if len(p.parts) == 0 || strings.Contains(p.parts[0], "*") {
		return ""
	}
	return p.parts[0]
}

// globMatch matches s against pattern, where '*' stands for any run of
// characters (within one component: callers split at '/' first). It
// backtracks only to the last star, so it takes O(len(pattern)·len(s))
// whatever the pattern: s comes from a client.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, from := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, from = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			from++
			p, i = star+1, from
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
