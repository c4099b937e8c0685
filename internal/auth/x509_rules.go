package auth

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"sitebox/internal/krb5auth"
	"sitebox/internal/problem"
)

// mapping parses the rules, the mapped scopes and the mapfiles into the
// mapping identities are made with, naming every problem by its key
// ("auth.x509.map[2].fqan"). Config check and the box's start both come
// here, so what one accepts the other does.
func (x *X509Settings) mapping() (*x509Mapping, []problem.Problem) {
	m := &x509Mapping{dnUsers: map[string]string{}}
	var ps []problem.Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem.Problem{Key: "auth.x509." + key, Msg: fmt.Sprintf(format, args...)})
	}
	for i, e := range x.Maps {
		r, err := e.rule()
		if err != nil {
			add(fmt.Sprintf("map[%d].%s", i+1, err.key), "%s", err.msg)
			continue
		}
		m.rules = append(m.rules, r)
	}
	var err error
	if m.mappedScopes, err = parseScopes(x.MappedScopes); err != nil {
		add("mapped_scopes", "%v", err)
	}
	for _, f := range []struct{ key, path string }{{"grid_mapfile", x.GridMapfile}, {"voms_mapfile", x.VOMSMapfile}} {
		if f.path == "" {
			continue
		}
		lines, err := readMapfile(f.path)
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe):
			add(f.key, "cannot read %s: %v", f.path, pe.Err)
			continue
		case err != nil:
			add(f.key, "%v", err) // names the file and line
			continue
		}
		m.addLines(lines)
	}
	return m, ps
}

// addLines files mapfile lines: a DN alone is looked up, the rest are
// rules after those of the config.
func (m *x509Mapping) addLines(lines []mapfileLine) {
	for _, l := range lines {
		if l.fqan == nil {
			if _, dup := m.dnUsers[l.dn]; !dup {
				m.dnUsers[l.dn] = l.user
			}
			continue
		}
		m.rules = append(m.rules, x509Rule{dn: l.dn, fqan: l.fqan, user: l.user})
	}
}

// ruleError is what is wrong with one [[auth.x509.map]] entry, and the
// key of the entry's field at fault.
type ruleError struct{ key, msg string }

func (e *ruleError) Error() string { return e.key + ": " + e.msg }

// rule parses one [[auth.x509.map]] entry.
func (e X509MapEntry) rule() (x509Rule, *ruleError) {
	r := x509Rule{dn: e.DN, user: e.User, groups: e.Groups}
	switch {
	case e.DN == "" && e.FQAN == "":
		return r, &ruleError{"dn", "a rule names a DN (dn = \"/DC=org/DC=example/CN=Alice\"), an FQAN (fqan = \"/cms/Role=production\"), or both"}
	case e.DN != "" && !isDN(e.DN):
		return r, &ruleError{"dn", fmt.Sprintf("%q is not a DN in slash form, as grid-proxy-info -identity prints it (/DC=org/DC=example/CN=Alice)", e.DN)}
	}
	if e.FQAN != "" {
		p, err := parseFQANPattern(e.FQAN)
		if err != nil {
			return r, &ruleError{"fqan", err.Error()}
		}
		r.fqan = &p
	}
	if e.User != "" {
		if err := krb5auth.CheckUser(e.User); err != nil {
			return r, &ruleError{"user", err.Error()}
		}
	}
	for _, g := range e.Groups {
		if err := checkGroup(g); err != nil {
			return r, &ruleError{"groups", err.Error()}
		}
	}
	var err error
	if r.scopes, err = parseScopes(e.Scopes); err != nil {
		return r, &ruleError{"scopes", err.Error()}
	}
	if e.User == "" && len(e.Groups) == 0 && len(e.Scopes) == 0 {
		return r, &ruleError{"scopes", "the rule grants nothing: give it a user, groups or scopes"}
	}
	return r, nil
}

// checkGroup accepts a group path as VOMS and tokens write them ("/cms",
// "/cms/uscms"), without a role.
func checkGroup(g string) error {
	if !strings.HasPrefix(g, "/") || len(g) < 2 || strings.ContainsAny(g, " \t=") || strings.Contains(g, "//") || strings.HasSuffix(g, "/") {
		return fmt.Errorf("group %q: want a group path such as \"/cms\" or \"/cms/uscms\" (roles are matched with fqan, not granted)", g)
	}
	return nil
}
