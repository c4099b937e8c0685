package auth

import (
	"strings"
	"testing"
	"time"

	"sitebox/internal/x509grid"
)

// fqan parses an FQAN as a VOMS server writes it.
func fqan(t *testing.T, s string) x509grid.FQAN {
	t.Helper()
	f, err := x509grid.ParseFQAN(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Patterns are matched in the full form: "/cms" is the group without a
// role, "/cms/Role=production" the role without a capability, "/cms/*"
// everything of the VO, an inner "*" one component.
func TestFQANPatternMatches(t *testing.T) {
	cases := []struct {
		pattern string
		yes, no []string
	}{
		{"/cms", []string{"/cms/Role=NULL/Capability=NULL", "/cms"}, []string{"/cms/Role=production/Capability=NULL", "/cms/uscms/Role=NULL/Capability=NULL", "/cmsx"}},
		{"/cms/Role=production", []string{"/cms/Role=production/Capability=NULL", "/cms/Role=production"}, []string{"/cms/Role=NULL/Capability=NULL", "/cms/uscms/Role=production/Capability=NULL"}},
		{"/cms/Role=production/Capability=NULL", []string{"/cms/Role=production"}, []string{"/cms"}},
		{"/cms/*", []string{"/cms/Role=NULL/Capability=NULL", "/cms/uscms/Role=pilot/Capability=NULL", "/cms/a/b/c"}, []string{"/atlas/Role=NULL/Capability=NULL", "/cmsx/Role=NULL/Capability=NULL"}},
		{"/fermilab/*/Role=pilot/Capability=NULL", []string{"/fermilab/dune/Role=pilot/Capability=NULL", "/fermilab/des/Role=pilot"}, []string{"/fermilab/Role=pilot/Capability=NULL", "/fermilab/a/b/Role=pilot/Capability=NULL"}},
		{"/cms/Role=*", []string{"/cms/Role=NULL/Capability=NULL", "/cms/Role=lcgadmin/Capability=NULL"}, []string{"/cms/uscms/Role=NULL/Capability=NULL"}},
		{"/cms/Role=production/*", []string{"/cms/Role=production/Capability=NULL"}, []string{"/cms/Role=NULL/Capability=NULL"}},
		{"/*", []string{"/cms/Role=NULL/Capability=NULL", "/atlas/x/Role=y/Capability=NULL"}, nil},
		{"/c*s", []string{"/cms/Role=NULL/Capability=NULL"}, []string{"/atlas/Role=NULL/Capability=NULL"}},
	}
	for _, c := range cases {
		p, err := parseFQANPattern(c.pattern)
		if err != nil {
			t.Errorf("%s: %v", c.pattern, err)
			continue
		}
		for _, f := range c.yes {
			if !p.matches(fullFQAN(fqan(t, f))) {
				t.Errorf("%s does not match %s", c.pattern, f)
			}
		}
		for _, f := range c.no {
			if p.matches(fullFQAN(fqan(t, f))) {
				t.Errorf("%s matches %s", c.pattern, f)
			}
		}
	}
}

// Forms no FQAN could take are refused, naming the pattern.
func TestFQANPatternRefused(t *testing.T) {
	for _, c := range []struct{ pattern, says string }{
		{"cms", "want /vo"},
		{"", "want /vo"},
		{"/cms /Role=production", "printable ASCII without spaces"},
		{"/cms/Rôle=x", "printable ASCII"},
		{"/cms//uscms", "empty or invalid component"},
		{"/cms/../atlas", "empty or invalid component"},
		{"/cms/Capability=NULL/Role=production", "come last, in that order"},
		{"/cms/Role=", "each with a value"},
		{"/cms/Role=a/b", "come last"},
		{"/cms/a=b", "empty or invalid component"},
		{"/", "empty or invalid component"},
	} {
		_, err := parseFQANPattern(c.pattern)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: %v, want an error saying %q", c.pattern, err, c.says)
		}
	}
}

// A client chooses the FQANs a pattern is matched with: the match must
// stay fast whatever the operator's pattern and the FQAN.
func TestGlobMatchHostile(t *testing.T) {
	s := strings.Repeat("a", 512)
	start := time.Now()
	for range 100 {
		if globMatch("*a*a*a*a*a*a*a*a*a*b", s) {
			t.Fatal("matched")
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("100 hostile matches took %v", took)
	}
	for _, c := range []struct {
		p, s string
		want bool
	}{{"*", "", true}, {"a*", "a", true}, {"*b", "ab", true}, {"a*c", "abbc", true}, {"a*c", "abcb", false}, {"**", "x", true}, {"x", "", false}} {
		if got := globMatch(c.p, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}
