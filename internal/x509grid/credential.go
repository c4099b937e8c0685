package x509grid

import (
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// maxCredentialFile bounds a proxy file read: a VOMS proxy chain is a
// few kilobytes.
const maxCredentialFile = 1 << 20

// Credential is an X.509 proxy the box presents to a server (gsi on
// root://, a TLS client certificate on https://): its chain, proxy
// first down to the user's certificate, and the proxy's key.
type Credential struct {
	File  string
	Chain []*x509.Certificate
	Key   *rsa.PrivateKey
	// Subject is the user's DN (the end-entity certificate's, slash
	// form); NotAfter the end of the chain's shortest validity.
	Subject  string
	NotAfter time.Time
}

// TLSCertificate is the credential as a TLS client certificate, the
// whole chain sent, as servers that take proxies need.
func (c *Credential) TLSCertificate() *tls.Certificate {
	tc := &tls.Certificate{PrivateKey: c.Key, Leaf: c.Chain[0]}
	for _, cert := range c.Chain {
		tc.Certificate = append(tc.Certificate, cert.Raw)
	}
	return tc
}

// Valid says whether the chain is within its validity at at.
func (c *Credential) Valid(at time.Time) error {
	for _, cert := range c.Chain {
		if at.Before(cert.NotBefore) {
			return fmt.Errorf("%s: %w (valid from %s)", c.File, ErrNotYetValid, cert.NotBefore.UTC().Format(time.RFC3339))
		}
	}
	if at.After(c.NotAfter) {
		return fmt.Errorf("%s: the proxy %w at %s: renew it (voms-proxy-init, or the robot certificate's renewal job)", c.File, ErrExpired, c.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// ReadCredential reads a proxy file as grid-proxy-init and
// voms-proxy-init write it (the proxy certificate, its key, then the
// certificates that issued it) and checks that it is one: a proxy
// first, signed by the certificate after it, the key the proxy's, and
// within its validity at at (outside it, the credential comes back with
// the error, for messages). The CA is not checked here: the server the
// proxy goes to decides.
func ReadCredential(file string, at time.Time) (*Credential, error) {
	data, err := readCredentialFile(file)
	if err != nil {
		return nil, err
	}
	c, err := parseCredential(file, data)
	if err != nil {
		return nil, err
	}
	return c, c.Valid(at)
}

// readCredentialFile reads a proxy file, bounded.
func readCredentialFile(file string) ([]byte, error) {
	data, err := readBounded(file, maxCredentialFile)
	if err != nil && !os.IsNotExist(err) && !os.IsPermission(err) {
		return nil, fmt.Errorf("%s: %w: not a proxy file", file, err)
	}
	return data, err
}

func parseCredential(file string, data []byte) (*Credential, error) {
	c := &Credential{File: file}
	for rest := data; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		switch b.Type {
		case "CERTIFICATE":
			cert, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: certificate %d: %v", file, len(c.Chain)+1, err)
			}
			c.Chain = append(c.Chain, cert)
		case "RSA PRIVATE KEY", "PRIVATE KEY":
			if c.Key != nil {
				return nil, fmt.Errorf("%s: more than one private key", file)
			}
			key, err := parseRSAKey(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", file, err)
			}
			c.Key = key
		}
	}
	switch {
	case len(c.Chain) == 0:
		return nil, fmt.Errorf("%s: no certificate: not a proxy file", file)
	case c.Key == nil:
		return nil, fmt.Errorf("%s: no private key: not a proxy file (the proxy and its key, as voms-proxy-init writes them)", file)
	case !c.Key.PublicKey.Equal(c.Chain[0].PublicKey):
		return nil, fmt.Errorf("%s: the private key is not the first certificate's", file)
	case len(c.Chain) > Limits{}.withDefaults().MaxChain:
		return nil, fmt.Errorf("%s: %d certificates, over the %d a chain may hold", file, len(c.Chain), Limits{}.withDefaults().MaxChain)
	}
	if err := c.checkProxy(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.NotAfter = c.Chain[0].NotAfter
	for _, cert := range c.Chain {
		if cert.NotAfter.Before(c.NotAfter) {
			c.NotAfter = cert.NotAfter
		}
	}
	return c, nil
}

// checkProxy checks that the first certificate is a proxy and each
// proxy is signed by the next certificate, and names the user.
func (c *Credential) checkProxy() error {
	first, err := parseName(c.Chain[0].RawSubject)
	if err != nil {
		return err
	}
	if info, err := classify(c.Chain[0], first); err != nil {
		return err
	} else if info.kind == notProxy {
		return errors.New("the first certificate is not a proxy: give a proxy (grid-proxy-init, voms-proxy-init), not a certificate")
	}
	i := 0
	for ; i < len(c.Chain); i++ {
		n, err := parseName(c.Chain[i].RawSubject)
		if err != nil {
			return err
		}
		if info, _ := classify(c.Chain[i], n); info.kind == notProxy {
			c.Subject = n.slash()
			break
		}
		if i+1 == len(c.Chain) {
			return errors.New("the file ends before the user's certificate that issued the proxy")
		}
		if err := c.Chain[i].CheckSignatureFrom(proxyIssuer(c.Chain[i+1])); err != nil {
			return fmt.Errorf("certificate %d is not signed by certificate %d: %v", i+1, i+2, err)
		}
	}
	return nil
}

// proxyIssuer is issuer as CheckSignatureFrom takes it: Go refuses a
// signer that is not a CA, which proxies and users' certificates are
// not, so only the key is used.
func proxyIssuer(issuer *x509.Certificate) *x509.Certificate {
	return &x509.Certificate{PublicKey: issuer.PublicKey, PublicKeyAlgorithm: issuer.PublicKeyAlgorithm, Version: 3, BasicConstraintsValid: true, IsCA: true}
}

func parseRSAKey(b *pem.Block) (*rsa.PrivateKey, error) {
	if b.Type == "RSA PRIVATE KEY" {
		return x509.ParsePKCS1PrivateKey(b.Bytes)
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the private key is not RSA, as gsi needs")
	}
	return rk, nil
}

// CredentialFile is a proxy file read again whenever it changes on disk
// (its modification time or size), so a proxy renewed in place or
// replaced is used from the next connection on, without a restart and
// without a goroutine watching it.
type CredentialFile struct {
	path string

	mu   sync.Mutex
	mod  time.Time
	size int64
	cur  *Credential
	err  error
}

// NewCredentialFile watches path; nothing is read until Get.
func NewCredentialFile(path string) *CredentialFile { return &CredentialFile{path: path} }

// Path is the file's name.
func (f *CredentialFile) Path() string { return f.path }

// Get is the credential in the file now: the same *Credential until the
// file changes, a new one after. An unreadable file, one that holds no
// proxy, or a proxy past its end is an error naming why: the caller
// then presents no credential, never the file's previous one.
func (f *CredentialFile) Get() (*Credential, error) {
	st, err := os.Stat(f.path)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		f.cur, f.err, f.mod = nil, err, time.Time{}
		return nil, err
	}
	if f.cur == nil && f.err == nil || !st.ModTime().Equal(f.mod) || st.Size() != f.size {
		f.mod, f.size = st.ModTime(), st.Size()
		data, err := readCredentialFile(f.path)
		if err == nil {
			f.cur, f.err = parseCredential(f.path, data)
		} else {
			f.cur, f.err = nil, err
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	if err := f.cur.Valid(time.Now()); err != nil {
		return nil, err
	}
	return f.cur, nil
}

// CertPool is base (nil: an empty pool) with the CA certificates of a
// grid CA directory added, for verifying the servers the box reaches
// (gsi's host certificate, https). Files it cannot use are skipped, as
// the Verifier does.
func CertPool(dir string, base *x509.CertPool) (*x509.CertPool, error) {
	d, err := loadCADir(dir, false, Limits{}.withDefaults())
	if err != nil {
		return nil, fmt.Errorf("CA directory: %w", err)
	}
	pool := x509.NewCertPool()
	if base != nil {
		pool = base.Clone()
	}
	for _, cas := range d.bySubject {
		for _, ca := range cas {
			pool.AddCert(ca.cert)
		}
	}
	return pool, nil
}
