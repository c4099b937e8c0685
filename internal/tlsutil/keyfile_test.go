package tlsutil

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k", "key.pem")
	gen := func() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }
	first, err := LoadOrCreateKey(path, "test key", gen)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateKey(path, "test key", gen)
	if err != nil || !first.Equal(again) {
		t.Fatalf("second call: %v; same key: %v", err, err == nil && first.Equal(again))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if _, err := LoadOrCreateKey(path, "test key", func() (ed25519.PrivateKey, error) { return nil, nil }); err == nil || !strings.Contains(err.Error(), "not a") {
		t.Errorf("ecdsa key read as ed25519: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := LoadOrCreateKey(path, "test key", gen); err == nil || !strings.Contains(err.Error(), "others can read it") {
		t.Errorf("a readable key file: %v, want refused", err)
	}
}
