package director

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"strings"
	"testing"
)

// verifies reports whether a chain the CA issued for host verifies
// against the CA certificate alone.
func verifies(t *testing.T, caPEM, chain []byte, host string) error {
	t.Helper()
	block, _ := pem.Decode(chain)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
	return err
}

func issueFor(t *testing.T, ca *CA, hosts ...string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	chain, err := ca.Issue(&key.PublicKey, "m", hosts)
	if err != nil {
		t.Fatal(err)
	}
	return chain
}

// A CA made with the federation's names carries them as X.509 name
// constraints: whatever its key signs outside them does not verify,
// addresses included when only domains are given.
func TestCAWithNameConstraints(t *testing.T) {
	nc, err := ParseNameConstraints([]string{"Example.org"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := LoadOrCreateCA(t.TempDir(), "region", nc)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.cert.PermittedDNSDomainsCritical || len(ca.cert.ExcludedIPRanges) != 2 {
		t.Errorf("constraints: critical %v, excluded ranges %v", ca.cert.PermittedDNSDomainsCritical, ca.cert.ExcludedIPRanges)
	}
	for host, ok := range map[string]bool{"t3.example.org": true, "example.org": true, "accounts.google.com": false, "example.org.evil.com": false, "192.0.2.7": false} {
		if err := verifies(t, ca.PEM(), issueFor(t, ca, host), host); (err == nil) != ok {
			t.Errorf("a certificate for %s: verify %v, want ok %v", host, err, ok)
		}
	}
	if got := ca.Within([]string{"localhost", "127.0.0.1", "box.example.org"}); strings.Join(got, ",") != "box.example.org" {
		t.Errorf("Within = %v", got)
	}
}

// Only addresses: every name is excluded.
func TestCANetworksOnly(t *testing.T) {
	nc, _ := ParseNameConstraints(nil, []string{"192.0.2.0/24"})
	ca, err := LoadOrCreateCA(t.TempDir(), "region", nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := verifies(t, ca.PEM(), issueFor(t, ca, "192.0.2.7"), "192.0.2.7"); err != nil {
		t.Errorf("an address within: %v", err)
	}
	if err := verifies(t, ca.PEM(), issueFor(t, ca, "t3.example.org"), "t3.example.org"); err == nil {
		t.Error("a name verified under a CA constrained to addresses")
	}
}

// A CA made before the constraints were configured is not used under
// them until reissue-ca: then it keeps its key, so what it issued before
// still verifies, and it refuses when an issued certificate lies outside.
func TestReissueCA(t *testing.T) {
	state := t.TempDir()
	ca, err := LoadOrCreateCA(state, "region", NameConstraints{})
	if err != nil {
		t.Fatal(err)
	}
	member := issueFor(t, ca, "t3.example.org")
	if _, err := WriteIssued(state, "t3", member); err != nil {
		t.Fatal(err)
	}
	nc, _ := ParseNameConstraints([]string{"example.org"}, []string{"192.0.2.0/24"})
	if _, err := LoadOrCreateCA(state, "region", nc); !errors.Is(err, ErrCAConstraints) || !strings.Contains(err.Error(), "reissue-ca") {
		t.Fatalf("constrained use of an unconstrained CA: %v", err)
	}
	narrow, _ := ParseNameConstraints([]string{"other.org"}, nil)
	if _, err := ReissueCA(state, narrow); err == nil || !strings.Contains(err.Error(), "t3.pem") {
		t.Fatalf("reissue under constraints an issued certificate breaks: %v", err)
	}
	again, err := ReissueCA(state, nc)
	if err != nil {
		t.Fatal(err)
	}
	if !again.key.Public().(*ecdsa.PublicKey).Equal(ca.key.Public()) || !again.cert.NotAfter.Equal(ca.cert.NotAfter) {
		t.Error("the re-issued CA has another key or expiry")
	}
	onDisk, _ := os.ReadFile(CAFile(state))
	if err := verifies(t, onDisk, member, "t3.example.org"); err != nil {
		t.Errorf("a member's certificate under the re-issued CA: %v", err)
	}
	if err := verifies(t, onDisk, issueFor(t, again, "evil.com"), "evil.com"); err == nil {
		t.Error("the re-issued CA does not constrain")
	}
	if _, err := LoadOrCreateCA(state, "region", nc); err != nil {
		t.Errorf("load with the configured constraints after reissue: %v", err)
	}
}

func TestParseNameConstraints(t *testing.T) {
	for _, c := range []struct {
		domains, networks []string
		err               string
	}{
		{[]string{"*.example.org"}, nil, "write the domain itself"},
		{[]string{".example.org"}, nil, "write the domain itself"},
		{[]string{"a,b"}, nil, "not a host name"},
		{nil, []string{"10.0.0.1"}, "not an address range"},
		{[]string{"ch"}, []string{"2001:db8::/32"}, ""},
	} {
		_, err := ParseNameConstraints(c.domains, c.networks)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%v %v: %v, want %q", c.domains, c.networks, err, c.err)
		}
	}
}
