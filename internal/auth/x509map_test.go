package auth

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/units"
	"sitebox/internal/x509grid"
)

const (
	aliceDN = "/DC=org/DC=example/OU=People/CN=Alice Example"
	bobDN   = "/DC=org/DC=example/OU=People/CN=Bob Example"
	caDN    = "/DC=org/DC=example/CN=Test Root CA"
)

// result is what a verified chain of dn with the FQANs (of their VOs)
// would give.
func result(t *testing.T, dn string, limited bool, fqans ...string) *x509grid.Result {
	t.Helper()
	r := &x509grid.Result{Subject: dn, Issuer: caDN, Limited: limited, Expires: time.Now().Add(time.Hour)}
	for _, s := range fqans {
		f := fqan(t, s)
		vo := strings.Split(f.Group, "/")[1]
		if len(r.VOs) == 0 || r.VOs[len(r.VOs)-1].Name != vo {
			r.VOs = append(r.VOs, x509grid.VO{Name: vo})
		}
		r.VOs[len(r.VOs)-1].FQANs = append(r.VOs[len(r.VOs)-1].FQANs, f)
	}
	return r
}

func writeText(t *testing.T, name, text string) string {
	t.Helper()
	return writeFile(t, name, []byte(text))
}

// testMapping is the mapping of s, which must have no problem.
func testMapping(t *testing.T, s X509Settings) *x509Mapping {
	t.Helper()
	m, ps := s.mapping()
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	return m
}

func scopes(id *store.Identity) []string {
	var out []string
	for _, s := range id.Scopes {
		out = append(out, s.Op+":"+s.Path)
	}
	return out
}

func TestX509Mapping(t *testing.T) {
	grid := writeText(t, "grid-mapfile", "# site users\n\"/DC=org/DC=example/OU=People/CN=Alice Example\" alice,alice2\n")
	voms := writeText(t, "voms-mapfile", "\"/testvo/prod/Role=production/Capability=NULL\" tvprod\n\"/testvo/*\" tvuser\n")
	m := testMapping(t, X509Settings{
		GridMapfile: grid, VOMSMapfile: voms,
		MappedScopes: []string{"storage.create:/store/user/{user}", "compute.create"},
		Maps: []X509MapEntry{
			{FQAN: "/testvo/prod/Role=production", Scopes: []string{"storage.create:/store/mc", "storage.modify:/store/mc"}},
			{DN: bobDN, Groups: []string{"/othervo"}, Scopes: []string{"storage.read:/store/bob"}},
		},
	})
	for _, c := range []struct {
		name       string
		res        *x509grid.Result
		wantGroups []string
		wantScopes []string
	}{
		{"a DN in the grid-mapfile is its user; the VOMS groups count",
			result(t, aliceDN, false, "/testvo/Role=NULL/Capability=NULL"),
			[]string{"/testvo"}, []string{"create:/store/user/alice", "compute.create:"}},
		{"the role's rule and its mapfile user, the primary FQAN first",
			result(t, bobDN, false, "/testvo/prod/Role=production/Capability=NULL", "/testvo/Role=NULL/Capability=NULL"),
			[]string{"/testvo/prod", "/testvo", "/othervo"},
			[]string{"create:/store/mc", "modify:/store/mc", "read:/store/bob", "create:/store/user/tvprod", "compute.create:"}},
		{"the VO's catch-all names the user of a plain member",
			result(t, bobDN, false, "/testvo/Role=NULL/Capability=NULL"),
			[]string{"/testvo", "/othervo"}, []string{"read:/store/bob", "create:/store/user/tvuser", "compute.create:"}},
		{"a limited proxy keeps read scopes only",
			result(t, bobDN, true, "/testvo/prod/Role=production/Capability=NULL"),
			[]string{"/testvo/prod", "/othervo"}, []string{"read:/store/bob"}},
		{"unmapped and without VOMS: nothing but the DN",
			result(t, "/DC=org/DC=example/OU=People/CN=Carol Example", false), nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := m.identity(c.res)
			// The FQANs as VOMS wrote them, in order, for the access log.
			var fqans []string
			for _, vo := range c.res.VOs {
				for _, f := range vo.FQANs {
					fqans = append(fqans, f.Value)
				}
			}
			if !slices.Equal(id.FQANs, fqans) {
				t.Errorf("FQANs %q, want %q", id.FQANs, fqans)
			}
			if id.Subject != c.res.Subject || id.Issuer != "x509:"+caDN || !id.Expires.Equal(c.res.Expires) {
				t.Errorf("identity %q of %q until %v", id.Subject, id.Issuer, id.Expires)
			}
			if !slices.Equal(id.Groups, c.wantGroups) {
				t.Errorf("groups %q, want %q", id.Groups, c.wantGroups)
			}
			if got := scopes(id); !slices.Equal(got, c.wantScopes) {
				t.Errorf("scopes %q, want %q", got, c.wantScopes)
			}
		})
	}
}

// The local user: a DN rule first, then the grid-mapfile's DN line, then
// per FQAN (the primary first) the first rule or VOMS mapfile line.
func TestX509LocalUser(t *testing.T) {
	grid := writeText(t, "grid-mapfile", "\"/DC=org/DC=example/OU=People/CN=Alice Example\" alicegrid\n\"/DC=org/DC=example/OU=People/CN=Alice Example\" second\n")
	voms := writeText(t, "voms-mapfile", "\"/testvo/*\" tvuser\n\"*\" \"/othervo\" ovuser\n\"/DC=org/DC=example/OU=People/CN=Bob Example\" \"/othervo/Role=admin\" bobadmin\n")
	m := testMapping(t, X509Settings{GridMapfile: grid, VOMSMapfile: voms, Maps: []X509MapEntry{
		{DN: bobDN, FQAN: "/testvo", User: "bobtv"},
	}})
	for _, c := range []struct {
		dn    string
		fqans []string
		want  string
	}{
		{aliceDN, []string{"/othervo/Role=NULL/Capability=NULL"}, "alicegrid"},
		{bobDN, []string{"/othervo/Role=NULL/Capability=NULL", "/testvo/Role=NULL/Capability=NULL"}, "ovuser"},
		{bobDN, []string{"/testvo/Role=NULL/Capability=NULL"}, "bobtv"},
		{bobDN, []string{"/othervo/Role=admin/Capability=NULL"}, "bobadmin"},
		{"/DC=org/CN=Someone", []string{"/othervo/Role=admin/Capability=NULL"}, ""},
		{"/DC=org/CN=Someone", nil, ""},
	} {
		if got := m.localUser(holderOf(result(t, c.dn, false, c.fqans...))); got != c.want {
			t.Errorf("%s with %q: user %q, want %q", c.dn, c.fqans, got, c.want)
		}
	}
}

// Mapfiles in the forms of Globus, XRootD, LCMAPS and dCache; what none
// of them means is refused with the file and line.
func TestMapfileLines(t *testing.T) {
	good := `# comment

"/DC=org/DC=example/OU=People/CN=Alice Example" alice
/DC=org/DC=example/CN=NoSpaces bare
"/cms/Role=production/Capability=NULL" cmsprod
"/fermilab/*/Role=pilot" fpilot
"*" "/atlas/Role=production" atlprod
"/DC=org/CN=Quote \"Q\" Name" quoted
`
	lines, err := readMapfile(writeText(t, "map", good))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ dn, fqan, user string }{
		{aliceDN, "", "alice"},
		{"/DC=org/DC=example/CN=NoSpaces", "", "bare"},
		{"", "/cms/Role=production/Capability=NULL", "cmsprod"},
		{"", "/fermilab/*/Role=pilot", "fpilot"},
		{"", "/atlas/Role=production", "atlprod"},
		{`/DC=org/CN=Quote "Q" Name`, "", "quoted"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	for i, w := range want {
		l := lines[i]
		text := ""
		if l.fqan != nil {
			text = l.fqan.text
		}
		if l.dn != w.dn || text != w.fqan || l.user != w.user {
			t.Errorf("line %d: %q %q %q, want %+v", l.line, l.dn, text, l.user, w)
		}
	}
	for _, c := range []struct{ line, says string }{
		{`"/cms" .cms`, "pool account"},
		{`"/cms" a/b`, "not a valid user name"},
		{`"/cms"`, `want "DN" user`},
		{`"/cms" a b c`, `want "DN" user`},
		{`cms "/cms" user`, `neither a DN`},
		{`"/cms`, "unterminated quote"},
		{`"/cms\n" x`, "an escape other than"},
		{`"/cms"x y`, "no space after a quoted name"},
		{`cms user`, "want /vo"},
		{`"*" "/DC=org/CN=A" user`, "is a DN"},
		{`"/cms/Capability=NULL/Role=x" user`, "come last"},
	} {
		_, err := readMapfile(writeText(t, "bad", "# first\n"+c.line+"\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want line 2 saying %q", c.line, err, c.says)
		}
	}
}

// Config check names the rule, the mapfile and the FQAN form at fault.
func TestX509SettingsProblems(t *testing.T) {
	dir := t.TempDir()
	s := X509Settings{CertDir: dir, VOMSDir: dir, Refresh: units.Duration(time.Second),
		GridMapfile: filepath.Join(dir, "missing-grid-mapfile"),
		VOMSMapfile: writeText(t, "voms-mapfile", "\"/cms\" ok\n\"/cms/Capability=NULL/Role=x\" bad\n"),
		Maps: []X509MapEntry{
			{User: "alice"},
			{DN: "CN=Alice", User: "alice"},
			{FQAN: "cms/Role=production", Scopes: []string{"storage.read:/store"}},
			{FQAN: "/cms", User: "a b"},
			{FQAN: "/cms", Groups: []string{"cms"}},
			{FQAN: "/cms", Scopes: []string{"storage.write:/store"}},
			{FQAN: "/cms"},
		},
		MappedScopes: []string{"storage.read:store"},
	}
	ps := s.validate(func(string) string { return "" })
	for _, w := range []struct{ key, says string }{
		{"auth.x509.refresh", `"1s" is not a duration between 1m0s and 24h0m0s`},
		{"auth.x509.grid_mapfile", "no such file"},
		{"auth.x509.voms_mapfile", "line 2: FQAN \"/cms/Capability=NULL/Role=x\""},
		{"auth.x509.map[1].dn", "a rule names a DN"},
		{"auth.x509.map[2].dn", "not a DN in slash form"},
		{"auth.x509.map[3].fqan", "want /vo"},
		{"auth.x509.map[4].user", "not a valid user name"},
		{"auth.x509.map[5].groups", "want a group path"},
		{"auth.x509.map[6].scopes", "storage.write"},
		{"auth.x509.map[7].scopes", "grants nothing"},
		{"auth.x509.mapped_scopes", "absolute path"},
	} {
		found := false
		for _, p := range ps {
			found = found || p.Key == w.key && strings.Contains(p.Msg, w.says)
		}
		if !found {
			t.Errorf("no problem %s saying %q in %v", w.key, w.says, ps)
		}
	}
}
