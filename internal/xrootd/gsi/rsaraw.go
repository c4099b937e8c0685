package gsi

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
)

// XRootD "encrypts with the private key" to sign: each chunk of at most
// k-11 bytes (k the modulus size) becomes a PKCS #1 v1.5 type-1 block
// over the chunk itself, with no DigestInfo, and the peer "decrypts
// with the public key", recovering the chunks. That is
// rsa.SignPKCS1v15 with hash 0, which signs its input as given, in
// constant time; recovery handles public data only, so math/big does.

// Bounds on a client's key and signed data: proxies use 1024 to 4096
// bits (below 1024 a key can be factored, and Go refuses such keys); a
// signed field is a tag or a DH blob of about 1.4 KB.
const (
	minClientKeyBits = 1024
	maxClientKeyBits = 8192
	maxSignedLen     = 8 << 10
)

// signRaw signs data chunk by chunk, as XRootD's EncryptPrivate.
func signRaw(key *rsa.PrivateKey, data []byte) ([]byte, error) {
	k := key.Size()
	chunk := k - 11
	var out []byte
	for len(data) > 0 {
		n := min(chunk, len(data))
		s, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.Hash(0), data[:n])
		if err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
		out = append(out, s...)
		data = data[n:]
	}
	return out, nil
}

var errBadSignature = errors.New("signature does not verify")

// recoverRaw recovers what signRaw signed, as XRootD's DecryptPublic:
// every k-byte block must be below the modulus and open to a type-1
// block (00 01, at least eight FF, 00, data).
func recoverRaw(pub *rsa.PublicKey, sig []byte) ([]byte, error) {
	k := pub.Size()
	if len(sig) == 0 || len(sig)%k != 0 || len(sig) > maxSignedLen+k {
		return nil, fmt.Errorf("%w: %d bytes are not whole %d-byte blocks", errBadSignature, len(sig), k)
	}
	e := big.NewInt(int64(pub.E))
	var out []byte
	for ; len(sig) > 0; sig = sig[k:] {
		s := new(big.Int).SetBytes(sig[:k])
		if s.Cmp(pub.N) >= 0 {
			return nil, errBadSignature
		}
		em := new(big.Int).Exp(s, e, pub.N).FillBytes(make([]byte, k))
		data, err := openType1(em)
		if err != nil {
			return nil, err
		}
		out = append(out, data...)
	}
	return out, nil
}

// openType1 strips PKCS #1 v1.5 type-1 padding.
func openType1(em []byte) ([]byte, error) {
	if len(em) < 11 || em[0] != 0 || em[1] != 1 {
		return nil, errBadSignature
	}
	i := 2
	for i < len(em) && em[i] == 0xff {
		i++
	}
	if i < 10 || i == len(em) || em[i] != 0 {
		return nil, errBadSignature
	}
	return em[i+1:], nil
}

// parseClientKey reads the client's public key (PEM "PUBLIC KEY", as
// OpenSSL's PEM_write_bio_PUBKEY writes it): RSA, of a sane size.
func parseClientKey(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: the client's public key is not a PEM PUBLIC KEY", ErrMalformed)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: the client's public key: %v", ErrMalformed, err)
	}
	pub, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the client's key is a %T: gsi needs RSA", k)
	}
	if bits := pub.N.BitLen(); bits < minClientKeyBits || bits > maxClientKeyBits {
		return nil, fmt.Errorf("the client's RSA key has %d bits (%d to %d taken)", bits, minClientKeyBits, maxClientKeyBits)
	}
	if pub.E < 3 || pub.E&1 == 0 || pub.E > 1<<31-1 {
		return nil, fmt.Errorf("the client's RSA key has public exponent %d", pub.E)
	}
	return pub, nil
}

// publicKeyPEM is how a client sends its key.
func publicKeyPEM(pub *rsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// sameKey reports whether a certificate's key is pub.
func sameKey(cert *x509.Certificate, pub *rsa.PublicKey) bool {
	ck, ok := cert.PublicKey.(*rsa.PublicKey)
	return ok && ck.E == pub.E && ck.N.Cmp(pub.N) == 0
}

// equalTag compares a recovered challenge with the one sent.
func equalTag(got, want []byte) bool {
	return len(want) > 0 && subtle.ConstantTimeCompare(got, want) == 1
}
