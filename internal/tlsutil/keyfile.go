package tlsutil

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"sitebox/internal/atomicfile"
)

// LoadOrCreateKey reads the PKCS#8 PEM private key of type K at path, or,
// when there is none yet, makes one with gen and writes it (mode 0600)
// without replacing a key another process wrote first. A key file group
// or others may read is refused, like ssh does: whoever reads it can act
// as this box. what names the key in errors ("federation key").
func LoadOrCreateKey[K crypto.Signer](path, what string, gen func() (K, error)) (K, error) {
	key, err := loadKey[K](path, what)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if key, err = gen(); err != nil {
		return key, fmt.Errorf("%s: %w", what, err)
	}
	data, err := KeyPEM(key)
	if err != nil {
		return key, fmt.Errorf("%s: %w", what, err)
	}
	err = atomicfile.Create(path, data, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadKey[K](path, what) // another process made it just now
	}
	if err != nil {
		return key, fmt.Errorf("%s: %w", what, err)
	}
	return key, nil
}

// loadKey reads the key at path; a missing file is fs.ErrNotExist.
func loadKey[K crypto.Signer](path, what string) (K, error) {
	var zero K
	fi, err := os.Stat(path)
	if err != nil {
		return zero, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return zero, fmt.Errorf("%s %s has mode %v: others can read it; chmod 600 it (and make a new one if it leaked)", what, path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return zero, fmt.Errorf("%s %s: no PEM block", what, path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	key, ok := k.(K)
	if !ok {
		return zero, fmt.Errorf("%s %s: a %T, not a %T", what, path, k, zero)
	}
	return key, nil
}
