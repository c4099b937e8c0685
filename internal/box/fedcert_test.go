package box

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"strings"
	"testing"

	"sitebox/internal/config"
	"sitebox/internal/director"
)

// install-cert takes only a chain for this box's own TLS key that
// verifies against the CA in it, and then the box serves it.
func TestInstallCert(t *testing.T) {
	cfg := &config.Config{}
	cfg.Server.StateDir = t.TempDir()
	key, err := loadOrCreateTLSKey(cfg.Server.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := director.LoadOrCreateCA(t.TempDir(), "region", director.NameConstraints{})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	foreign, _ := ca.Issue(&other.PublicKey, "x", []string{"127.0.0.1"})
	mine, _ := ca.Issue(&key.PublicKey, "b", []string{"127.0.0.1"})
	for _, c := range []struct {
		name string
		data []byte
		err  string
	}{
		{"garbage", []byte("hello"), "want the box's certificate followed"},
		{"leaf alone", mine[:len(mine)-len(ca.PEM())], "want the box's certificate followed"},
		{"another box's", foreign, "not for this box's TLS key"},
	} {
		if _, err := InstallCert(cfg, c.data); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		}
	}
	if _, err := InstallCert(cfg, mine); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(FederationCAFile(cfg.Server.StateDir)); string(b) != string(ca.PEM()) {
		t.Error("the federation CA was not installed")
	}
	if advertiseCA(cfg) != FederationCAFile(cfg.Server.StateDir) {
		t.Error("advertising does not trust the installed CA")
	}
	b := &Box{cfg: cfg}
	tc, err := b.federationTLS(nil)
	if err != nil || tc == nil || len(tc.Certificates[0].Certificate) != 2 {
		t.Fatalf("the box does not serve the installed chain: %v", err)
	}
}
