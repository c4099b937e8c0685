package tlsutil

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestSelfSignedCreatedOnceAndTrusted(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadOrCreate("", "", dir, []string{"localhost", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, "cert.pem"))
	if fi, _ := os.Stat(filepath.Join(dir, "key.pem")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := LoadOrCreate("", "", dir, nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "cert.pem")); string(again) != string(first) {
		t.Fatal("certificate regenerated on second start")
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(first)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("https with the generated certificate as root: %v", err)
	}
	resp.Body.Close()
	if _, err := LoadOrCreate("/nonexistent.pem", "", dir, nil); err == nil {
		t.Fatal("cert without key accepted")
	}
}
