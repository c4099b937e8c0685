package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCacheTrustedRedirectsChecked(t *testing.T) {
	text := `[cache]
dir = "/srv/cache"
trusted_redirects = ["data.example.org:1094", "*", "https://x:1"]
[[cache.route]]
prefix = "/store"
upstreams = ["root://h:1094"]
`
	_, _, err := Parse("site.toml", []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	var n int
	for _, p := range ps.List {
		if p.Key == "cache.trusted_redirects" {
			n++
			if p.Line != 3 {
				t.Errorf("line %d, want 3: %v", p.Line, p)
			}
		}
	}
	if n != 2 || !strings.Contains(ps.Error(), `"*"`) || !strings.Contains(ps.Error(), "https://x:1") {
		t.Errorf("want the two bad patterns named: %v", ps)
	}
}

// A cache filling with its own token is warned about cached prefixes no
// [[auth.namespace]] rule covers; an anonymous cache is not.
func TestCacheUnruledPrefixWarning(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(tok, []byte("t"), 0o600)
	for _, c := range []struct {
		name, token, rules string
		want               []string // substrings of the warnings, in route order
	}{
		{"no rules", tok, "", []string{"/store is filled", "no [[auth.namespace]] rule covers it", "/other is filled"}},
		{"inner rule", tok, `[[auth.namespace]]
prefix = "/store/cms"
read = "vo"
vos = ["cms"]
`, []string{"rules cover only /store/cms", "/other is filled"}},
		{"covering rules", tok, `[[auth.namespace]]
prefix = "/"
read = "token"
`, nil},
		{"anonymous", "", "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := "[cache]\ndir = \"/srv/cache\"\nupstream_token_file = \"" + c.token + "\"\n" +
				"[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"roots://h:1094\"]\n" +
				"[[cache.route]]\nprefix = \"/other\"\nupstreams = [\"roots://h:1094\"]\n[auth]\nsite_issuer = true\nsite_issuer_vos = [\"cms\"]\n" + c.rules
			cfg, _, err := Parse("site.toml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			all := ""
			for _, w := range cfg.Warnings() {
				all += w.String() + "\n"
			}
			if len(c.want) == 0 && all != "" {
				t.Fatalf("unexpected warnings:\n%s", all)
			}
			for _, s := range c.want {
				if !strings.Contains(all, s) {
					t.Errorf("warnings lack %q:\n%s", s, all)
				}
			}
		})
	}
}
