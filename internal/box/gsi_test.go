package box

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/webdav"
	"sitebox/internal/xrootd/gsi"
	xrdserver "sitebox/internal/xrootd/server"
)

// A box with [auth.x509] offers gsi with its https certificate when that
// is a CA-issued RSA certificate, and otherwise says why it does not.
func TestGSIHostCredential(t *testing.T) {
	dir := t.TempDir()
	caKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ca := testCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "Test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}, nil, caKey, caKey.Public())
	certDir := filepath.Join(dir, "certs")
	os.MkdirAll(certDir, 0o755)
	hostKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	host := testCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"}}, ca, caKey, hostKey.Public())
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecHost := testCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}}, ca, caKey, ecKey.Public())
	selfSigned := testCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}}, nil, hostKey, hostKey.Public())
	hashes, _ := gsi.IssuerHashes(host)

	cases := []struct {
		name      string
		cert      *x509.Certificate
		key       crypto.Signer
		caKnown   bool
		offered   bool
		logFields []string
	}{
		{name: "CA-issued RSA certificate", cert: host, key: hostKey, caKnown: true, offered: true},
		{name: "its CA not in the box's CA directory", cert: host, key: hostKey, offered: true,
			logFields: []string{"clients need it in their X509_CERT_DIR", hashes}},
		{name: "no https certificate", logFields: []string{"gsi (X.509 proxies over root://) is not offered", "self-signed one the box makes cannot serve"}},
		{name: "ECDSA certificate", cert: ecHost, key: ecKey, logFields: []string{"gsi needs RSA"}},
		{name: "self-signed RSA certificate", cert: selfSigned, key: hostKey, logFields: []string{"it is self-signed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(certDir)
			os.MkdirAll(certDir, 0o755)
			if c.caKnown {
				os.WriteFile(filepath.Join(certDir, hashes[:10]), pemCert(ca), 0o644)
			}
			cfg := gsiBoxConfig(t, certDir)
			if c.cert != nil {
				cfg.HTTPS.Cert, cfg.HTTPS.Key = writePair(t, c.cert, c.key)
			}
			var log bytes.Buffer
			b, err := New(cfg, slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if (b.gsi != nil) != c.offered {
				t.Fatalf("gsi offered: %v, want %v; log:\n%s", b.gsi != nil, c.offered, log.String())
			}
			if c.offered && b.gsi.Offer() != "gsi,v:10600,c:ssl,ca:"+hashes {
				t.Errorf("offer %q", b.gsi.Offer())
			}
			for _, f := range c.logFields {
				if !strings.Contains(log.String(), f) {
					t.Errorf("the log lacks %q:\n%s", f, log.String())
				}
			}
		})
	}
}

func gsiBoxConfig(t *testing.T, certDir string) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
		Server:  config.Server{StateDir: t.TempDir()},
		Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:   webdav.Settings{Addr: "127.0.0.1:0"},
		Auth:    auth.Settings{X509: &auth.X509Settings{CertDir: certDir, VOMSDir: t.TempDir()}},
	}
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	return cfg
}

func testCert(t *testing.T, tmpl, parent *x509.Certificate, signer crypto.Signer, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return c
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// writePair writes a certificate and its key as [https] cert and key.
func writePair(t *testing.T, c *x509.Certificate, key crypto.Signer) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pemCert(c), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	return certFile, keyFile
}
