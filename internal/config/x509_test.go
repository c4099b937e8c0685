package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const x509Export = `[[export]]
prefix = "/store"
pools = ["%s"]
`

// [auth.x509] decodes into typed settings; the directories default to
// the X509_* variables, then to /etc/grid-security.
func TestX509Settings(t *testing.T) {
	dir := t.TempDir()
	certs, voms := filepath.Join(dir, "certificates"), filepath.Join(dir, "vomsdir")
	os.Mkdir(certs, 0o755)
	os.Mkdir(voms, 0o755)
	export := strings.Replace(x509Export, "%s", dir, 1)

	cfg, _, err := Parse("site.toml", []byte(export))
	if err != nil || cfg.Auth.X509 != nil {
		t.Fatalf("no [auth.x509]: %v, settings %+v", err, cfg.Auth.X509)
	}

	text := export + "\n[auth.x509]\ncert_dir = \"" + certs + "\"\nvoms_dir = \"" + voms + "\"\ncrl = \"require\"\n"
	cfg, _, err = Parse("site.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ApplyDefaults("box", false)
	x := cfg.Auth.X509
	if x == nil || x.CertDir != certs || x.VOMSDir != voms || x.CRL != "require" {
		t.Fatalf("settings %+v", x)
	}
	if v, err := x.Verifier(); err != nil || v.CAs() != 0 {
		t.Errorf("verifier of an empty CA directory: %v", err)
	}

	t.Setenv("X509_CERT_DIR", certs)
	t.Setenv("X509_VOMS_DIR", voms)
	cfg, _, err = Parse("site.toml", []byte(export+"\n[auth.x509]\n"))
	if err != nil {
		t.Fatalf("directories from the environment: %v", err)
	}
	cfg.ApplyDefaults("box", false)
	if x := cfg.Auth.X509; x == nil || x.CertDir != certs || x.VOMSDir != voms || x.CRL != "try" {
		t.Errorf("defaults %+v", x)
	}
}

func TestX509Problems(t *testing.T) {
	dir := t.TempDir()
	export := strings.Replace(x509Export, "%s", dir, 1)
	t.Setenv("X509_CERT_DIR", "")
	t.Setenv("X509_VOMS_DIR", filepath.Join(dir, "no-vomsdir"))
	text := export + `
[auth.x509]
cert_dir = "/nonexistent/certificates"
crl = "always"
`
	_, _, err := Parse("site.toml", []byte(text))
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Parse error = %v, want *Problems", err)
	}
	for _, want := range []struct{ key, msg string }{
		{"auth.x509.cert_dir", "cannot read /nonexistent/certificates"},
		{"auth.x509.voms_dir", "cannot read " + filepath.Join(dir, "no-vomsdir") + " (default: $X509_VOMS_DIR, else /etc/grid-security/vomsdir)"},
		{"auth.x509.crl", `"always" is not a CRL mode`},
	} {
		found := false
		for _, p := range ps.List {
			found = found || p.Key == want.key && strings.Contains(p.Msg, want.msg)
		}
		if !found {
			t.Errorf("no problem %s saying %q in %v", want.key, want.msg, ps.List)
		}
	}
}
