package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestIssuerVOProblems: wrong VO settings are refused with their line.
func TestIssuerVOProblems(t *testing.T) {
	dir := t.TempDir()
	text := `[[export]]
prefix = "/store"
pools = ["` + dir + `"]

[auth]
site_issuer = true
site_issuer_vos = ["atlas"]

[[auth.issuer]]
url = "https://cms-auth.example/"
vos = ["/cms"]

[[auth.namespace]]
prefix = "/store/cms"
read = "vo"
vos = ["cms", "dune"]

[[auth.operator]]
issuer = "https://elsewhere.example"
subject = "root"
`
	_, _, err := Parse("site.toml", []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	want := []struct {
		key  string
		line int
		msg  string
	}{
		{"auth.issuer[1].vos", 11, `"/cms" is a group, not a VO: write "cms"`},
		{"auth.namespace[1].vos", 16, `no trusted issuer may assert VO "dune"`},
		{"auth.operator[1].issuer", 19, `"https://elsewhere.example" is not a trusted issuer`},
	}
	for _, w := range want {
		found := false
		for _, p := range ps.List {
			if p.Key == w.key && strings.Contains(p.Msg, w.msg) {
				found = true
				if p.Line != w.line {
					t.Errorf("%s reported at line %d, want %d", w.key, p.Line, w.line)
				}
			}
		}
		if !found {
			t.Errorf("no problem %s naming %q in %v", w.key, w.msg, ps.List)
		}
	}
	if len(ps.List) != len(want) {
		t.Errorf("problems = %v, want %d", ps.List, len(want))
	}

	fixed := strings.NewReplacer(`vos = ["/cms"]`, `vos = ["cms"]`, `"cms", "dune"`, `"cms", "atlas"`,
		`issuer = "https://elsewhere.example"`, `issuer = "https://cms-auth.example/"`).Replace(text)
	if _, _, err := Parse("site.toml", []byte(fixed)); err != nil {
		t.Fatalf("fixed config: %v", err)
	}
}

// TestMaxTokenLifetime: [auth] max_token_lifetime defaults to a week and
// refuses what is no duration, or one beyond a year.
func TestMaxTokenLifetime(t *testing.T) {
	dir := t.TempDir()
	base := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[auth]\nsite_issuer = true\n"
	cfg, _, err := Parse("site.toml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Auth.MaxLifetime(); d.Hours() != 168 {
		t.Errorf("default max_token_lifetime = %v; want 168h", d)
	}
	for _, bad := range []string{"forever", "0s", "9000h"} {
		_, _, err := Parse("site.toml", []byte(base+"max_token_lifetime = \""+bad+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), "auth.max_token_lifetime") {
			t.Errorf("max_token_lifetime = %q: %v, want a problem naming the key", bad, err)
		}
	}
	if _, _, err := Parse("site.toml", []byte(base+"max_token_lifetime = \"6h\"\n")); err != nil {
		t.Errorf("max_token_lifetime = 6h: %v", err)
	}
}

// TestClockSkew: [auth] clock_skew takes a positive duration up to an
// hour, 60s when unset; "0s" is refused (kerberos and tokens never read
// it as "no skew").
func TestClockSkew(t *testing.T) {
	dir := t.TempDir()
	base := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[auth]\nsite_issuer = true\n"
	cfg, _, err := Parse("site.toml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box.example.org", false)
	if d := cfg.Auth.Skew(); d != 60*time.Second {
		t.Errorf("default clock_skew = %v; want 60s", d)
	}
	for bad, msg := range map[string]string{
		"-1s": `"-1s" is not a positive duration of at most 1h`,
		"2h":  `"2h0m0s" is not a positive duration of at most 1h`,
		"0s":  `"0s" is not a positive duration of at most 1h (leave the setting out for its default)`,
	} {
		_, _, err := Parse("site.toml", []byte(base+"clock_skew = \""+bad+"\"\n"))
		if err == nil || !strings.Contains(err.Error(), "line 6: auth.clock_skew: "+msg) {
			t.Errorf("clock_skew = %q: %v, want %s", bad, err, msg)
		}
	}
	if _, _, err := Parse("site.toml", []byte(base+"clock_skew = \"5s\"\n")); err != nil {
		t.Errorf("clock_skew = 5s: %v", err)
	}
}
