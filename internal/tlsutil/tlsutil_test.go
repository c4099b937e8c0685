package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// httpsGet serves "ok" with cfg and fetches it trusting only rootPEM.
func httpsGet(t *testing.T, cfg *tls.Config, rootPEM []byte) error {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(rootPEM) {
		t.Fatal("certificate PEM does not parse")
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); string(b) != "ok" {
		t.Fatalf("body %q", b)
	}
	return nil
}

func TestSelfSignedCreatedOnceAndTrusted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "tls")
	cfg, err := LoadOrCreate("", "", dir, []string{"localhost", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(dir, CertName))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := os.ReadFile(filepath.Join(dir, KeyName))
	if fi, err := os.Stat(filepath.Join(dir, KeyName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want mode 0600", fi, err)
	}
	if err := httpsGet(t, cfg, first); err != nil {
		t.Fatalf("https with the generated certificate as root: %v", err)
	}
	// A restart (other hosts even) reuses the same identity.
	cfg2, err := LoadOrCreate("", "", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, CertName))
	key2, _ := os.ReadFile(filepath.Join(dir, KeyName))
	if string(again) != string(first) || string(key2) != string(key) {
		t.Fatal("certificate or key regenerated on second start")
	}
	if err := httpsGet(t, cfg2, first); err != nil {
		t.Fatalf("https after restart: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("state dir holds %d files, want 2", len(entries))
	}
}

func TestGivenFiles(t *testing.T) {
	gen := t.TempDir()
	if _, err := LoadOrCreate("", "", gen, []string{"127.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(gen, CertName), filepath.Join(gen, KeyName)
	cfg, err := LoadOrCreate(certFile, keyFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, _ := os.ReadFile(certFile)
	if err := httpsGet(t, cfg, pemBytes); err != nil {
		t.Fatal(err)
	}
	// Another certificate is not trusted for it.
	other := t.TempDir()
	LoadOrCreate("", "", other, []string{"127.0.0.1"})
	otherPEM, _ := os.ReadFile(filepath.Join(other, CertName))
	if err := httpsGet(t, cfg, otherPEM); err == nil {
		t.Fatal("https trusted a certificate that is not the root")
	}
	for _, tc := range []struct{ name, cert, key string }{
		{"cert without key", certFile, ""},
		{"key without cert", "", keyFile},
		{"missing files", filepath.Join(gen, "nope.pem"), filepath.Join(gen, "nope.key")},
		{"mismatched", certFile, filepath.Join(other, KeyName)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadOrCreate(tc.cert, tc.key, t.TempDir(), nil); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestCorruptStateIsNotOverwritten(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, CertName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}), 0o644)
	os.WriteFile(filepath.Join(dir, KeyName), []byte("junk"), 0o600)
	if _, err := LoadOrCreate("", "", dir, nil); err == nil {
		t.Fatal("corrupt generated certificate accepted")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, KeyName)); string(b) != "junk" {
		t.Fatal("corrupt state was overwritten")
	}
	// Only a key (crash before the certificate was written): regenerate.
	dir2 := t.TempDir()
	os.WriteFile(filepath.Join(dir2, KeyName), []byte("stale"), 0o600)
	if _, err := LoadOrCreate("", "", dir2, nil); err != nil {
		t.Fatalf("half-generated state not repaired: %v", err)
	}
}

// Boxes' generated certificates go into one CA bundle for clients that
// follow redirects across boxes; OpenSSL picks trust anchors by subject,
// so two boxes must never share one.
func TestGeneratedSubjectsDiffer(t *testing.T) {
	subject := func() string {
		dir := t.TempDir()
		if _, err := LoadOrCreate("", "", dir, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, CertName))
		if err != nil {
			t.Fatal(err)
		}
		blk, _ := pem.Decode(b)
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c.Subject.String()
	}
	if a, b := subject(), subject(); a == b {
		t.Errorf("two generated certificates share the subject %q", a)
	}
}
