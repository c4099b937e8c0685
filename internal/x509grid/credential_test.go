package x509grid

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadCredential(t *testing.T) {
	fx := sharedFixture(t)
	b := fx.Scratch(t)
	voms := fx.VOMSProxyOf(b, fx.Alice, nil)
	expired := fx.VOMSProxyOf(b, fx.Alice, nil, "-hours", "1", "-pastproxy", "3:00", "-pastac", "3:00", "-vomslife", "1")
	userAsProxy := b.Cat("user.pem", fx.Alice.Cert, fx.Alice.Key)
	b.OK(t)
	data, err := os.ReadFile(voms.Chain)
	if err != nil {
		t.Fatal(err)
	}
	var certsOnly []byte
	for rest := data; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			certsOnly = append(certsOnly, pem.EncodeToMemory(blk)...)
		}
	}
	noKey := b.Write("nokey.pem", string(certsOnly))

	c, err := ReadCredential(voms.Chain, time.Now())
	if err != nil {
		t.Fatalf("a VOMS proxy: %v", err)
	}
	if c.Subject != aliceDN || len(c.Chain) != 2 || c.Key == nil {
		t.Errorf("read %q, %d certificates", c.Subject, len(c.Chain))
	}
	if tc := c.TLSCertificate(); len(tc.Certificate) != 2 {
		t.Errorf("the TLS certificate carries %d certificates, want the chain's 2", len(tc.Certificate))
	}
	for _, tc := range []struct {
		name, file string
		want       string
		is         error
	}{
		{"missing", filepath.Join(t.TempDir(), "none"), "no such file", os.ErrNotExist},
		{"expired", expired.Chain, "expired", ErrExpired},
		{"no key", noKey, "no private key", nil},
		{"a certificate, not a proxy", userAsProxy, "not a proxy", nil},
		{"garbage", b.Write("garbage.pem", "hello\n"), "no certificate", nil},
	} {
		_, err := ReadCredential(tc.file, time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// A proxy file replaced on disk is read again at the next Get; until
// then the same credential is returned.
func TestCredentialFileReload(t *testing.T) {
	fx := sharedFixture(t)
	b := fx.Scratch(t)
	alice := fx.VOMSProxyOf(b, fx.Alice, nil)
	bob := fx.VOMSProxyOf(b, fx.Bob, nil)
	expired := fx.VOMSProxyOf(b, fx.Alice, nil, "-hours", "1", "-pastproxy", "3:00", "-pastac", "3:00", "-vomslife", "1")
	b.OK(t)
	file := filepath.Join(t.TempDir(), "x509up")
	replace := func(src string) {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		tmp := file + ".new"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	f := NewCredentialFile(file)
	if _, err := f.Get(); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no file yet: %v", err)
	}
	replace(alice.Chain)
	c1, err := f.Get()
	if err != nil || c1.Subject != aliceDN {
		t.Fatalf("first read: %v", err)
	}
	if c2, _ := f.Get(); c2 != c1 {
		t.Error("an unchanged file was read again into another credential")
	}
	replace(bob.Chain)
	if c3, err := f.Get(); err != nil || c3.Subject != bobDN {
		t.Fatalf("after replacing the file: %v, %v", c3, err)
	}
	replace(expired.Chain)
	if _, err := f.Get(); !errors.Is(err, ErrExpired) {
		t.Fatalf("an expired proxy replacing the file: %v, want expired (the old proxy is not kept)", err)
	}
}

func TestCertPool(t *testing.T) {
	fx := sharedFixture(t)
	pool, err := CertPool(fx.CADir, nil)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ReadCredential(fx.VOMSProxyOf(fx.Scratch(t), fx.Alice, nil).Chain, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The user certificate chains to the CA directory's root.
	if _, err := host.Chain[1].Verify(x509VerifyOptions(pool)); err != nil {
		t.Errorf("the user's certificate does not verify against the pool: %v", err)
	}
	if _, err := CertPool(filepath.Join(t.TempDir(), "none"), nil); err == nil {
		t.Error("a missing CA directory gave a pool")
	}
}

func x509VerifyOptions(pool *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
}
