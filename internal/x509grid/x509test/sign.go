package x509test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"math/big"
	"time"
)

// Sign issues tmpl with a random serial, valid from an hour before now
// to a day after, signed by signer as parent (nil: self-signed): the
// in-memory certificates of tests that need no grid tools.
func Sign(tmpl, parent *x509.Certificate, signer crypto.Signer, pub crypto.PublicKey, now time.Time) (*x509.Certificate, error) {
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = sn
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}
