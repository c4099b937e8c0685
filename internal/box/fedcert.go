package box

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sitebox/internal/atomicfile"
	"sitebox/internal/config"
	"sitebox/internal/director"
	"sitebox/internal/tlsutil"
)

// A box in a federation whose director is its CA serves a certificate the
// director issued (to the TLS key `federation join` made and named in the
// request) and trusts that CA when it advertises. The files live in the
// state dir's tls/, next to the self-signed pair they replace.
func fedKeyFile(stateDir string) string { return filepath.Join(stateDir, "tls", "federation-key.pem") }
func fedCertFile(stateDir string) string {
	return filepath.Join(stateDir, "tls", "federation-cert.pem")
}

// FederationCAFile is the federation CA a box installed with its
// certificate (install-cert), or a CA director's own.
func FederationCAFile(stateDir string) string {
	return filepath.Join(stateDir, "tls", "federation-ca.pem")
}

// loadOrCreateTLSKey reads the box's federation TLS key, making it on first
// use (mode 0600).
func loadOrCreateTLSKey(stateDir string) (*ecdsa.PrivateKey, error) {
	return tlsutil.LoadOrCreateKey(fedKeyFile(stateDir), "TLS key", func() (*ecdsa.PrivateKey, error) {
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	})
}

// tlsKeyText is the request's form of the box's TLS public key.
func tlsKeyText(key *ecdsa.PrivateKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

// InstallCert checks a certificate chain a federation director issued
// (its certificate, then the CA's) against this box's TLS key and the CA,
// and installs both for the next start. It returns the certificate.
func InstallCert(cfg *config.Config, chain []byte) (*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := chain; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("the file holds a %s: want the certificates approve wrote", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a certificate in the file: %w", err)
		}
		certs = append(certs, c)
	}
	if len(certs) < 2 || !certs[len(certs)-1].IsCA {
		return nil, errors.New("want the box's certificate followed by the federation CA's (the file `sitebox federation approve` wrote)")
	}
	leaf, ca := certs[0], certs[len(certs)-1]
	key, err := loadOrCreateTLSKey(cfg.Server.StateDir)
	if err != nil {
		return nil, err
	}
	if pub, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok || !pub.Equal(&key.PublicKey) {
		return nil, fmt.Errorf("the certificate is not for this box's TLS key %s (was it issued for another box, or was join run with another state dir?)", fedKeyFile(cfg.Server.StateDir))
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots}); err != nil {
		return nil, fmt.Errorf("the certificate does not verify against the CA in the file: %w", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	if err := writeFile(FederationCAFile(cfg.Server.StateDir), caPEM, 0o644); err != nil {
		return nil, err
	}
	return leaf, writeFile(fedCertFile(cfg.Server.StateDir), chain, 0o644)
}

// federationTLS is the certificate from the federation CA, or nil when
// the box has none: a CA director issues its own at each start, a member
// serves what install-cert installed.
func (b *Box) federationTLS(hosts []string) (*tls.Config, error) {
	state := b.cfg.Server.StateDir
	if b.cfg.Director.Enabled && b.cfg.Director.CA {
		if err := b.issueOwnCert(hosts); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(fedCertFile(state)); err != nil {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(fedCertFile(state), fedKeyFile(state))
	if err != nil {
		return nil, fmt.Errorf("federation certificate %s: %w", fedCertFile(state), err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// issueOwnCert has the director's CA sign the director's own certificate,
// for the local names and the endpoints it would advertise.
func (b *Box) issueOwnCert(hosts []string) error {
	state := b.cfg.Server.StateDir
	nc, err := b.cfg.Director.NameConstraints()
	if err != nil {
		return fmt.Errorf("[director] %w", err)
	}
	ca, err := director.LoadOrCreateCA(state, b.cfg.Server.Name, nc)
	if err != nil {
		return err
	}
	key, err := loadOrCreateTLSKey(state)
	if err != nil {
		return err
	}
	if root, https, err := configEndpoints(b.cfg); err == nil {
		for _, raw := range []string{"root://" + root, https} {
			if u, err := url.Parse(raw); err == nil && u.Hostname() != "" && !slices.Contains(hosts, u.Hostname()) {
				hosts = append(hosts, u.Hostname())
			}
		}
	}
	// Under name constraints, names outside them (localhost, a bare
	// hostname) would make the certificate fail to verify at all.
	if within := ca.Within(hosts); len(within) < len(hosts) {
		if len(within) == 0 {
			return fmt.Errorf("none of the director's names (%s) is within the federation's names (%s): set [director] https_url (or [advertise] https_url) to one that is",
				strings.Join(hosts, ", "), ca.Constraints())
		}
		b.log.Info("the director's certificate leaves out names outside the federation's", "names", within, "constraints", ca.Constraints().String())
		hosts = within
	}
	chain, err := ca.Issue(&key.PublicKey, b.cfg.Server.Name, hosts)
	if err != nil {
		return err
	}
	if err := writeFile(FederationCAFile(state), ca.PEM(), 0o644); err != nil {
		return err
	}
	return writeFile(fedCertFile(state), chain, 0o644)
}

// advertiseCA is the CA file the advertiser trusts: [advertise] ca, else
// the federation CA installed with the box's certificate.
func advertiseCA(cfg *config.Config) string {
	if cfg.Advertise.CA != "" {
		return cfg.Advertise.CA
	}
	if _, err := os.Stat(FederationCAFile(cfg.Server.StateDir)); err == nil {
		return FederationCAFile(cfg.Server.StateDir)
	}
	return ""
}

// writeFile writes data to path unless it holds data already.
func writeFile(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return atomicfile.Write(path, data, mode)
}
