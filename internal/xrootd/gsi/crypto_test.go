package gsi

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What `openssl genpkey -genparam -algorithm DH -pkeyopt group:modp_3072`
// writes: the blob's head must be byte for byte what OpenSSL reads as
// its named group (and so checks at no cost).
const opensslModp3072 = `-----BEGIN DH PARAMETERS-----
MIIBiAKCAYEA///////////JD9qiIWjCNMTGYouA3BzRKQJOCIpnzHQCC76mOxOb
IlFKCHmONATd75UZs806QxswKwpt8l8UN0/hNW1tUcJF5IW1dmJefsb0TELppjft
awv/XLb0Brft7jhr+1qJn6WunyQRfEsf5kkoZlHs5Fs9wgB8uKFjvwWY2kg2HFXT
mmkWP6j9JM9fg2VdI9yjrZYcYvNWIIVSu57VKQdwlpZtZww1Tkq8mATxdGwIyhgh
fDKQXkYuNs474553LBgOhgObJ4Oi7Aeij7XFXfBvTFLJ3ivL9pVYFxg5lUl86pVq
5RXSJhiY+gUQFXKOWoqqxC2tMxcNBFB6M6hVIavfHLpk7PuFBFjb7wqK6nFXXQYM
fbOXD4Wm4eTHq/WujNsJM9cejJTgSiVhnc7j0iYa0u5r8S/6BtmKCGTYdgJzPshq
ZFIfKxgXeyAMu+EXV3phXWx3CYjAutlG4gjiT6B05asxQ9tb/OD9EI5LgtEgqTrS
yv//////////AgEC
-----END DH PARAMETERS-----
`

func TestDHGroup(t *testing.T) {
	grp := newDHGroup()
	if string(grp.pem) != opensslModp3072 {
		t.Errorf("parameters:\n%s\nwant OpenSSL's modp_3072:\n%s", grp.pem, opensslModp3072)
	}
	a, _ := grp.generate(rand.Reader)
	b, _ := grp.generate(rand.Reader)
	if a.x.BitLen() != dhExponentBits {
		t.Errorf("exponent of %d bits", a.x.BitLen())
	}
	blob := a.blob()
	if !bytes.HasPrefix(blob, grp.pem) || !bytes.HasSuffix(blob, []byte(dhPubEnd)) {
		t.Errorf("blob %q", blob)
	}
	ya, err := grp.peerValue(blob)
	if err != nil || ya.Cmp(a.y) != 0 {
		t.Fatalf("peer value: %v", err)
	}
	for _, padded := range []bool{true, false} {
		ka, _ := a.sessionKey(b.y, padded)
		kb, _ := b.sessionKey(ya, padded)
		if len(ka) != aesKeySize || !bytes.Equal(ka, kb) {
			t.Errorf("padded %v: keys %x and %x", padded, ka, kb)
		}
	}
	pMinus1 := new(big.Int).Sub(grp.p, big.NewInt(1))
	for _, bad := range []string{"0", "1", strings.ToUpper(pMinus1.Text(16)), strings.ToUpper(grp.p.Text(16)), "zz", strings.Repeat("F", 2*grp.size()+4)} {
		if _, err := grp.peerValue([]byte(dhPubBegin + bad + dhPubEnd)); err == nil {
			t.Errorf("peer value %.20s… taken", bad)
		}
	}
	if _, err := grp.peerValue([]byte("no markers")); err == nil {
		t.Errorf("a blob without markers taken")
	}
}

// The secret's first 16 bytes are the key whether OpenSSL pads it or
// not, so a secret with a leading zero byte tells padded from unpadded.
func TestSessionKeyPadding(t *testing.T) {
	grp := newDHGroup()
	for range 2000 {
		a, _ := grp.generate(rand.Reader)
		b, _ := grp.generate(rand.Reader)
		if new(big.Int).Exp(b.y, a.x, grp.p).BitLen() > 8*(grp.size()-1) {
			continue
		}
		padded, _ := a.sessionKey(b.y, true)
		unpadded, _ := a.sessionKey(b.y, false)
		if padded[0] != 0 || bytes.Equal(padded, unpadded) {
			t.Errorf("padded %x unpadded %x", padded, unpadded)
		}
		return
	}
	t.Skip("no secret with a leading zero byte in 2000 tries")
}

func TestSignRecover(t *testing.T) {
	p := sharedPKI(t)
	k := p.hostKey.Size()
	for _, n := range []int{1, 8, k - 11, k - 10, 3*k + 5} {
		data := bytes.Repeat([]byte{0xa5}, n)
		sig, err := signRaw(p.hostKey, data)
		if err != nil {
			t.Fatal(err)
		}
		if want := (n + k - 12) / (k - 11) * k; len(sig) != want {
			t.Errorf("%d bytes signed into %d, want %d", n, len(sig), want)
		}
		got, err := recoverRaw(&p.hostKey.PublicKey, sig)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: recovered %d bytes, %v", n, len(got), err)
		}
		if _, err := recoverRaw(&p.otherKey.PublicKey, sig); err == nil {
			t.Errorf("%d bytes: recovered with another key", n)
		}
		sig[len(sig)/2] ^= 1
		if _, err := recoverRaw(&p.hostKey.PublicKey, sig); err == nil {
			t.Errorf("%d bytes: a tampered signature recovered", n)
		}
	}
	if _, err := recoverRaw(&p.hostKey.PublicKey, p.hostKey.N.Bytes()); err == nil {
		t.Errorf("a block equal to the modulus recovered")
	}
}

// signRaw is OpenSSL's raw PKCS #1 v1.5 private-key encryption (what
// XRootD calls), byte for byte: the padding is deterministic.
func TestSignRawMatchesOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	p := sharedPKI(t)
	dir := t.TempDir()
	der, _ := x509.MarshalPKCS8PrivateKey(p.hostKey)
	keyFile := filepath.Join(dir, "key.pem")
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	data := []byte("Ab3./xYz")
	os.WriteFile(filepath.Join(dir, "in"), data, 0o600)
	out, err := exec.Command("openssl", "pkeyutl", "-sign", "-inkey", keyFile, "-pkeyopt", "rsa_padding_mode:pkcs1", "-in", filepath.Join(dir, "in")).Output()
	if err != nil {
		t.Fatalf("openssl pkeyutl: %v", err)
	}
	sig, _ := signRaw(p.hostKey, data)
	if !bytes.Equal(sig, out) {
		t.Errorf("signature differs from OpenSSL's")
	}
}

// The session cipher is OpenSSL's aes-128-cbc with the IV in front.
func TestCBCMatchesOpenSSL(t *testing.T) {
	key := []byte("0123456789abcdef")
	plain := []byte("gsi main buffer, 33 bytes long..")
	sealed, err := encryptBucket(key, plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(sealed) != ivSize+48 {
		t.Errorf("%d bytes sealed", len(sealed))
	}
	got, err := decryptBucket(key, sealed)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("opened %q, %v", got, err)
	}
	for _, bad := range [][]byte{sealed[:ivSize], sealed[:len(sealed)-1], append(bytes.Clone(sealed[:len(sealed)-16]), make([]byte, 16)...)} {
		if _, err := decryptBucket(key, bad); err == nil {
			t.Errorf("%d bytes opened", len(bad))
		}
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
	cmd := exec.Command("openssl", "enc", "-d", "-aes-128-cbc", "-K", hex.EncodeToString(key), "-iv", hex.EncodeToString(sealed[:ivSize]))
	cmd.Stdin = bytes.NewReader(sealed[ivSize:])
	out, err := cmd.Output()
	if err != nil || !bytes.Equal(out, plain) {
		t.Errorf("openssl enc -d: %q, %v", out, err)
	}
}

func TestUnpad(t *testing.T) {
	block := func(tail ...byte) []byte { return append(bytes.Repeat([]byte{'x'}, 16-len(tail)), tail...) }
	for _, c := range []struct {
		in   []byte
		n    int
		good bool
	}{
		{block(1), 15, true},
		{block(2, 2), 14, true},
		{bytes.Repeat([]byte{16}, 16), 0, true},
		{block(0), 0, false},
		{block(1, 2), 0, false},
		{block(17), 0, false},
		{block(3, 2, 3), 0, false},
	} {
		n, good := unpad(c.in)
		if good != c.good || good && n != c.n {
			t.Errorf("unpad(%x) = %d %v, want %d %v", c.in, n, good, c.n, c.good)
		}
	}
}

func TestParseClientKey(t *testing.T) {
	p := sharedPKI(t)
	good, _ := publicKeyPEM(&p.proxyKey.PublicKey)
	if k, err := parseClientKey(good); err != nil || !k.Equal(&p.proxyKey.PublicKey) {
		t.Errorf("a good key: %v", err)
	}
	small := p.proxyKey.PublicKey
	small.N = new(big.Int).Rsh(small.N, 1100)
	smallPEM, _ := publicKeyPEM(&small)
	for name, in := range map[string][]byte{
		"not PEM":     []byte("garbage"),
		"certificate": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.host.Raw}),
		"948 bits":    smallPEM,
	} {
		if _, err := parseClientKey(in); err == nil {
			t.Errorf("%s taken", name)
		}
	}
}

// The blinded exponentiation is the plain one, for any peer value.
func TestBlindedExp(t *testing.T) {
	grp := newDHGroup()
	k, _ := grp.generate(rand.Reader)
	other, _ := grp.generate(rand.Reader)
	pMinus1 := new(big.Int).Sub(grp.p, big.NewInt(1))
	for _, y := range []*big.Int{other.y, big.NewInt(2), big.NewInt(3), new(big.Int).Sub(pMinus1, big.NewInt(1))} {
		got, err := k.blindedExp(y)
		if want := new(big.Int).Exp(y, k.x, grp.p); err != nil || got.Cmp(want) != 0 {
			t.Errorf("y = %.16s…: blinded %v, want the plain power", y.Text(16), err)
		}
	}
}
