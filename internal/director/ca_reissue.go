package director

import (
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sitebox/internal/atomicfile"
)

// ReissueCA replaces the federation CA certificate in stateDir with one
// of the same key, subject and expiry that carries the name constraints
// nc (none: the zero value). The certificates the CA issued stay valid
// under it, so it refuses, naming them, when one names a host outside
// nc: that member would stop verifying. The old CA certificate, having
// the same key, still trusts whatever the key signs for whoever keeps
// it; only a new CA makes the constraints binding on everyone.
func ReissueCA(stateDir string, nc NameConstraints) (*CA, error) {
	unlock, err := lockCA(stateDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	old, err := loadCA(stateDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("there is no federation CA in %s yet: the director makes it, with the configured constraints, at its first start", filepath.Dir(CAFile(stateDir)))
	}
	if err != nil {
		return nil, err
	}
	if err := issuedWithin(stateDir, nc); err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               old.cert.Subject,
		SubjectKeyId:          old.cert.SubjectKeyId, // members' certificates name it as their issuer's
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              old.cert.NotAfter,
		KeyUsage:              old.cert.KeyUsage,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	nc.apply(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, old.key.Public(), old.key)
	if err != nil {
		return nil, fmt.Errorf("federation CA: %w", err)
	}
	if err := atomicfile.Write(CAFile(stateDir), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	return loadCA(stateDir)
}

// issuedWithin checks the certificates approve wrote in stateDir against
// nc, naming every one that names a host outside it.
func issuedWithin(stateDir string, nc NameConstraints) error {
	files, err := filepath.Glob(filepath.Join(filepath.Dir(IssuedCertFile(stateDir, "x")), "*.pem"))
	if err != nil {
		return err
	}
	var outside []string
	for _, f := range files {
		leaf, err := readLeaf(f)
		if err != nil {
			return err
		}
		if leaf.NotAfter.Before(time.Now()) {
			continue
		}
		hosts := leaf.DNSNames
		for _, ip := range leaf.IPAddresses {
			hosts = append(hosts, ip.String())
		}
		for _, h := range hosts {
			if err := nc.Permits(h); err != nil {
				outside = append(outside, fmt.Sprintf("%s: %v", f, err))
			}
		}
	}
	if len(outside) > 0 {
		return fmt.Errorf("certificates the CA issued name hosts outside the new constraints, and would stop verifying (revoke those members and remove their files first):\n  %s", strings.Join(outside, "\n  "))
	}
	return nil
}

// readLeaf reads the first certificate of a PEM file.
func readLeaf(path string) (*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s: not PEM", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Constraints are the name constraints the CA certificate carries.
func (c *CA) Constraints() NameConstraints { return constraintsOf(c.cert) }

// Within keeps the hosts the CA's constraints permit, in order.
func (c *CA) Within(hosts []string) []string {
	nc := c.Constraints()
	var out []string
	for _, h := range hosts {
		if nc.Permits(h) == nil {
			out = append(out, h)
		}
	}
	return out
}
