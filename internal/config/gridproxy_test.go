package config

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeProxy writes an RFC 3820 proxy file (the proxy, its key, the
// user's certificate) ending at notAfter; bad names how to spoil it.
func writeProxy(t *testing.T, dir, bad string, notAfter time.Time) string {
	t.Helper()
	userKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	proxyKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	userName := pkix.Name{Organization: []string{"Example"}, CommonName: "Robot"}
	user := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: userName,
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, BasicConstraintsValid: true}
	userDER, err := x509.CreateCertificate(rand.Reader, user, user, &userKey.PublicKey, userKey)
	if err != nil {
		t.Fatal(err)
	}
	user, _ = x509.ParseCertificate(userDER)
	// ProxyCertInfo ::= SEQUENCE { proxyPolicy SEQUENCE { id-ppl-inheritAll } }
	pci, _ := asn1.Marshal(struct {
		Policy struct{ Lang asn1.ObjectIdentifier }
	}{struct{ Lang asn1.ObjectIdentifier }{asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 21, 1}}})
	proxy := &x509.Certificate{SerialNumber: big.NewInt(4242),
		Subject:   pkix.Name{Organization: []string{"Example"}, CommonName: "Robot", ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "4242"}}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 1, 14}, Critical: true, Value: pci}}}
	proxyDER, err := x509.CreateCertificate(rand.Reader, proxy, user, &proxyKey.PublicKey, userKey)
	if err != nil {
		t.Fatal(err)
	}
	cert := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	key := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(proxyKey)})
	var data []byte
	switch bad {
	case "":
		data = append(append(cert(proxyDER), key...), cert(userDER)...)
	case "certificate":
		data = append(cert(userDER), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(userKey)})...)
	case "no key":
		data = append(cert(proxyDER), cert(userDER)...)
	}
	file := filepath.Join(dir, fmt.Sprintf("proxy-%s-%d.pem", strings.ReplaceAll(bad, " ", "-"), notAfter.UnixNano()))
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// config check refuses a proxy file that cannot serve and warns of one
// expired or near its end; [tpc] needs proxy_file and proxy_hosts
// together.
func TestGridProxyChecks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("X509_CERT_DIR", dir)
	cache := func(file string) string {
		return "[cache]\ndir = \"/srv/cache\"\nupstream_proxy_file = \"" + file + "\"\n" +
			"[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://h:1094\"]\n" +
			"[auth]\nsite_issuer = true\n[[auth.namespace]]\nprefix = \"/store\"\nread = \"public\"\n"
	}
	for _, c := range []struct {
		name, text string
		problem    string // in the problems, "" for none
		warning    string // in the warnings, "" for none
	}{
		{"valid", cache(writeProxy(t, dir, "", time.Now().Add(12*time.Hour))), "", ""},
		{"missing", cache(filepath.Join(dir, "none.pem")), "cache.upstream_proxy_file: cannot read", ""},
		{"a certificate", cache(writeProxy(t, dir, "certificate", time.Now().Add(12*time.Hour))), "not a proxy", ""},
		{"no key", cache(writeProxy(t, dir, "no key", time.Now().Add(12*time.Hour))), "no private key", ""},
		{"expired", cache(writeProxy(t, dir, "", time.Now().Add(-time.Minute))), "", "cache.upstream_proxy_file: " + dir},
		{"ending", cache(writeProxy(t, dir, "", time.Now().Add(2*time.Hour))), "", "check that its renewal runs"},
		{"tpc without hosts", "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[tpc]\nproxy_file = \"" + writeProxy(t, dir, "", time.Now().Add(12*time.Hour)) + "\"\n", "tpc.proxy_file: set, but proxy_hosts is empty", ""},
		{"tpc hosts without file", "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[tpc]\nproxy_hosts = [\"se.example.org\"]\n", "tpc.proxy_hosts: set, but proxy_file is not", ""},
		{"no CA directory", cache(writeProxy(t, dir, "", time.Now().Add(12*time.Hour))) + "[auth.x509]\ncert_dir = \"" + filepath.Join(dir, "nocerts") + "\"\n", "auth.x509.cert_dir: cannot read", ""},
		{"tpc", "[[export]]\nprefix = \"/store\"\npools = [\"" + dir + "\"]\n[tpc]\nproxy_file = \"" + filepath.Join(dir, "gone.pem") + "\"\nproxy_hosts = [\"se.example.org\"]\n", "tpc.proxy_file: cannot read", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _, err := Parse("site.toml", []byte(c.text))
			var ps *Problems
			switch {
			case c.problem == "" && err != nil:
				t.Fatalf("problems: %v", err)
			case c.problem != "" && (!errors.As(err, &ps) || !strings.Contains(err.Error(), c.problem)):
				t.Fatalf("problems %v, want one saying %q", err, c.problem)
			case c.problem != "":
				return
			}
			all := ""
			for _, w := range cfg.Warnings() {
				all += w.String() + "\n"
			}
			if c.warning == "" && all != "" || c.warning != "" && !strings.Contains(all, c.warning) {
				t.Errorf("warnings:\n%s\nwant %q", all, c.warning)
			}
		})
	}
}

// A box presenting a proxy without [auth.x509] checks servers against
// $X509_CERT_DIR (else /etc/grid-security/certificates): config check
// names it when it is not a directory.
func TestGridProxyNeedsCADir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("X509_CERT_DIR", filepath.Join(dir, "nocerts"))
	text := "[cache]\ndir = \"/srv/cache\"\nupstream_proxy_file = \"" + writeProxy(t, dir, "", time.Now().Add(12*time.Hour)) + "\"\n" +
		"[[cache.route]]\nprefix = \"/store\"\nupstreams = [\"root://h:1094\"]\n" +
		"[auth]\nsite_issuer = true\n[[auth.namespace]]\nprefix = \"/store\"\nread = \"public\"\n"
	_, _, err := Parse("site.toml", []byte(text))
	if err == nil || !strings.Contains(err.Error(), "auth.x509.cert_dir: the servers the box presents its X.509 proxy to") || !strings.Contains(err.Error(), "nocerts") {
		t.Errorf("problems %v, want the missing CA directory named", err)
	}
}
