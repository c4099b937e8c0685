package director

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// The CA is made once and kept; what it issues verifies against it for the
// member's hosts only, and the handler serves the file users download.
func TestCAIssue(t *testing.T) {
	state := t.TempDir()
	rec := httptest.NewRecorder()
	CAHandler(state).ServeHTTP(rec, httptest.NewRequest("GET", CAPath, nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "ca = true") {
		t.Errorf("no CA yet: %d %q", rec.Code, rec.Body)
	}
	ca, err := LoadOrCreateCA(state, "region", NameConstraints{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateCA(state, "region", NameConstraints{})
	if err != nil || string(again.PEM()) != string(ca.PEM()) {
		t.Fatalf("second load made another CA: %v", err)
	}
	m := Member{Name: "t3", Root: "t3.example.org:1094", HTTPS: "https://10.0.0.7:8443"}
	if got := m.Hosts(); !slices.Equal(got, []string{"t3.example.org", "10.0.0.7"}) {
		t.Errorf("hosts = %v", got)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	chain, err := ca.Issue(&key.PublicKey, m.Name, m.Hosts())
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(chain)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil || string(rest) != string(ca.PEM()) {
		t.Fatalf("chain: %v, rest %q", err, rest)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM())
	for host, ok := range map[string]bool{"t3.example.org": true, "10.0.0.7": true, "evil.example.org": false} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
		if (err == nil) != ok {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if _, err := ca.Issue(&key.PublicKey, "nohost", nil); err == nil {
		t.Error("a certificate for no host was issued")
	}
	rec = httptest.NewRecorder()
	CAHandler(state).ServeHTTP(rec, httptest.NewRequest("GET", CAPath, nil))
	if rec.Code != 200 || rec.Body.String() != string(ca.PEM()) {
		t.Errorf("GET ca.pem: %d", rec.Code)
	}
}

func TestRequestTLSKey(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 1024)
	rsaDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	for _, c := range []struct {
		name, key, err string
	}{
		{"ecdsa", base64.StdEncoding.EncodeToString(ecDER), ""},
		{"none", "", "names no TLS key"},
		{"not base64", "!!", "not base64"},
		{"not a key", base64.StdEncoding.EncodeToString([]byte("junk")), "TLS key"},
		{"rsa", base64.StdEncoding.EncodeToString(rsaDER), "want ECDSA or Ed25519"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Request{Member: Member{Name: "b"}, TLSKey: c.key}.TLSPublicKey()
			if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
				t.Errorf("got %v, want %q", err, c.err)
			}
		})
	}
}
