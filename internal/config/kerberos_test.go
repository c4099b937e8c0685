package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A box may take Kerberos users alone: its realm's groups assert the VO a
// namespace names, and no token issuer is needed.
func TestKerberosOnly(t *testing.T) {
	dir := t.TempDir()
	kt := filepath.Join(dir, "box.keytab")
	os.WriteFile(kt, []byte{5, 2}, 0o600)
	text := `[[export]]
prefix = "/store"
pools = ["` + dir + `"]

[auth.kerberos]
keytab = "` + kt + `"
principals = ["xrootd/box.example.org@EXAMPLE.ORG"]
[[auth.kerberos.realm]]
name = "EXAMPLE.ORG"
groups = ["/cms"]
scopes = ["storage.read:/store", "storage.create:/store/user/{user}"]

[[auth.namespace]]
prefix = "/store/cms"
read = "vo"
vos = ["cms"]
`
	cfg, _, err := Parse("site.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box.example.org", false) // clock_skew's default, 60s, reaches krb5
	if k := cfg.Auth.Kerberos.Krb5(cfg.Auth.Skew()); len(k.Realms) != 1 || k.Realms[0].Scopes[1] != "storage.create:/store/user/{user}" || k.ClockSkew.Seconds() != 60 {
		t.Errorf("krb5auth config %+v", k)
	}
}

func TestKerberosProblems(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, krb, key, want string }{
		{"no keytab file", `keytab = "/nonexistent/box.keytab"
principals = ["xrootd/h@R"]
[[auth.kerberos.realm]]
name = "R"`, "auth.kerberos.keytab", "cannot read /nonexistent/box.keytab"},
		{"bad principal", `keytab = "` + dir + `"
principals = ["xrootd/h"]
[[auth.kerberos.realm]]
name = "R"`, "auth.kerberos", "want name@REALM"},
		{"bad scope", `keytab = "` + dir + `"
principals = ["xrootd/h@R"]
[[auth.kerberos.realm]]
name = "R"
scopes = ["storage.write:/x"]`, "auth.kerberos", `scope "storage.write:/x"`},
		{"no realm", `keytab = "` + dir + `"
principals = ["xrootd/h@R"]`, "auth.kerberos", "no Kerberos user could be mapped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[auth.kerberos]\n" + c.krb + "\n"
			_, _, err := Parse("site.toml", []byte(text))
			var ps *Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse error = %v, want *Problems", err)
			}
			for _, p := range ps.List {
				if p.Key == c.key && strings.Contains(p.Msg, c.want) {
					return
				}
			}
			t.Errorf("no problem %s naming %q in %v", c.key, c.want, ps.List)
		})
	}
}
