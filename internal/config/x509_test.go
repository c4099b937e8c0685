package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// writeCert writes a self-signed certificate valid until notAfter, and
// its key.
func writeCert(t *testing.T, dir string, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "host.pem"), filepath.Join(dir, "host.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// config check warns of a host certificate near its end and of X.509
// trust stores that refuse credentials: no CA, a VO a read = "vo"
// namespace needs missing from the vomsdir.
func TestX509Warnings(t *testing.T) {
	dir := t.TempDir()
	certs, voms := filepath.Join(dir, "certificates"), filepath.Join(dir, "vomsdir")
	os.Mkdir(certs, 0o755)
	os.Mkdir(voms, 0o755)
	cert, key := writeCert(t, dir, time.Now().Add(3*24*time.Hour+time.Hour))
	text := strings.Replace(x509Export, "%s", dir, 1) + `
[https]
cert = "` + cert + `"
key = "` + key + `"
[auth]
site_issuer = true
site_issuer_vos = ["cms"]
[auth.x509]
cert_dir = "` + certs + `"
voms_dir = "` + voms + `"
[[auth.namespace]]
prefix = "/store/cms"
read = "vo"
vos = ["cms"]
`
	cfg, _, err := Parse("site.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	ws := cfg.Warnings()
	for _, want := range []struct{ key, msg string }{
		{"https.cert", "expires on " + time.Now().Add(3*24*time.Hour+time.Hour).UTC().Format(time.DateOnly) + ", in 3 days"},
		{"auth.x509.cert_dir", certs + " holds no CA certificate"},
		{"auth.x509.voms_dir", "VOMS proxies of cms are refused on /store/cms"},
	} {
		found := false
		for _, w := range ws {
			found = found || w.Key == want.key && strings.Contains(w.Msg, want.msg)
		}
		if !found {
			t.Errorf("no warning %s saying %q in %v", want.key, want.msg, ws)
		}
	}
}
