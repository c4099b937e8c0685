package box

import (
	"context"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/gsi"
	xrdserver "sitebox/internal/xrootd/server"
)

// buildGSI makes the server side of XRootD's gsi protocol for a box
// with [auth.x509]. gsi proves the server with its host certificate,
// which clients check against their own CA directory and the name they
// dialled, so it must be a CA-issued RSA certificate: the box's TLS one
// ([https] cert and key). A box without such a certificate takes X.509
// credentials elsewhere (https client certificates) but does not offer
// gsi, and says why at start.
func (b *Box) buildGSI() {
	if b.x509 == nil {
		return
	}
	cert, key, why := b.gsiHostCredential()
	if why != "" {
		b.log.Warn("gsi (X.509 proxies over root://) is not offered: "+why, "https.cert", b.cfg.HTTPS.Cert)
		return
	}
	certDir := b.cfg.Auth.X509.CertDir
	g, err := gsi.New(gsi.Config{Cert: cert, Key: key, Verify: b.gsiVerify, KnownCA: knownCA(certDir)})
	if err != nil {
		b.log.Warn("gsi (X.509 proxies over root://) is not offered", "reason", err.Error(), "https.cert", b.cfg.HTTPS.Cert)
		return
	}
	if hashes, _ := gsi.IssuerHashes(cert); !anyKnown(certDir, hashes) {
		// Clients look the CA up in their own directory, so this only
		// hints at a mistake: most sites share one CA directory.
		b.log.Warn("the CA of the host certificate gsi offers is not in auth.x509.cert_dir: clients need it in their X509_CERT_DIR",
			"ca", hashes, "cert_dir", certDir)
	}
	b.gsi = g
}

// gsiHostCredential loads [https] cert and key for gsi; why says what
// keeps them from serving ("" when they do).
func (b *Box) gsiHostCredential() (*x509.Certificate, *rsa.PrivateKey, string) {
	h := b.cfg.HTTPS
	if h.Cert == "" {
		return nil, nil, "it needs a CA-issued RSA host certificate ([https] cert and key); the self-signed one the box makes cannot serve"
	}
	pair, err := tls.LoadX509KeyPair(h.Cert, h.Key)
	if err != nil {
		return nil, nil, fmt.Sprintf("the host certificate does not load: %v", err)
	}
	key, ok := pair.PrivateKey.(*rsa.PrivateKey)
	if !ok {
		return nil, nil, fmt.Sprintf("the host key is %T; gsi needs RSA", pair.PrivateKey)
	}
	return pair.Leaf, key, ""
}

// withGSI hands the gsi server to a root:// config (left nil, not a
// typed nil, without one).
func (b *Box) withGSI(rc *xrdserver.Config) {
	if b.gsi != nil {
		rc.GSI = b.gsi
	}
}

// gsiVerify hands the chain a gsi exchange proved to the authenticator,
// which verifies it with [auth.x509]'s trust stores (and logs the
// attribute certificates it does not accept, since the client sees only
// that its VO is missing).
func (b *Box) gsiVerify(chain []*x509.Certificate, at time.Time) (*store.Identity, error) {
	return b.authn.Authenticate(context.Background(), auth.Chain{Certs: chain, At: at})
}

// knownCA reports whether a CA directory holds a CA file by a name
// gsi has already checked to be "<8 hex digits>.<digit>".
func knownCA(dir string) func(string) bool {
	return func(hash string) bool {
		fi, err := os.Stat(filepath.Join(dir, hash))
		return err == nil && fi.Mode().IsRegular()
	}
}

// anyKnown reports whether one of the "h.0|o.0" hashes is in dir.
func anyKnown(dir, hashes string) bool {
	for _, h := range strings.Split(hashes, "|") {
		if knownCA(dir)(h) {
			return true
		}
	}
	return false
}
