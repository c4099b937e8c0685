package hostlist

import (
	"strings"
	"testing"
)

func TestAllows(t *testing.T) {
	l, err := New([]string{"roots://origin.example.org:1095", "https://dav.example.org", "root://Dir.Example.org:1094//data"},
		[]string{"10.0.0.7:1094", "data.site.org", "*.fed.org", "*.pinned.org:2094"}, "[cache] trusted_redirects")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, hostport string
		want           bool
	}{
		{"upstream", "origin.example.org:1095", true},
		{"upstream other port", "origin.example.org:1096", false},
		{"https default port", "dav.example.org:443", true},
		{"case", "dir.example.org:1094", true},
		{"exact", "10.0.0.7:1094", true},
		{"exact other port", "10.0.0.7:1095", false},
		{"host any port", "data.site.org:31000", true},
		{"wildcard", "a.b.fed.org:1094", true},
		{"wildcard is not the domain", "fed.org:1094", false},
		{"wildcard suffix trick", "evilfed.org:1094", false},
		{"pinned port", "x.pinned.org:2094", true},
		{"pinned other port", "x.pinned.org:2095", false},
		{"internal", "169.254.169.254:80", false},
		{"no port", "data.site.org", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := l.Allows(c.hostport); got != c.want {
				t.Errorf("Allows(%q) = %v, want %v", c.hostport, got, c.want)
			}
		})
	}
	if err := l.Check("169.254.169.254:80"); err == nil || !strings.Contains(err.Error(), "169.254.169.254:80") || !strings.Contains(err.Error(), "trusted_redirects") {
		t.Errorf("Check: %v", err)
	}
}

func TestCheckPattern(t *testing.T) {
	for _, c := range []struct {
		p  string
		ok bool
	}{
		{"host:1094", true}, {"host", true}, {"*.example.org", true}, {"[::1]:1094", true},
		{"*", false}, {"", false}, {"*example.org", false}, {"a.*.org", false},
		{"https://host:1", false}, {"host:port", false},
	} {
		if err := CheckPattern(c.p); (err == nil) != c.ok {
			t.Errorf("CheckPattern(%q) = %v, want ok=%v", c.p, err, c.ok)
		}
	}
}
