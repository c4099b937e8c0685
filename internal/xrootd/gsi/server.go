package gsi

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// Version is the gsi version spoken, XRootD's XrdSecgsiVERSION since
// 5.0: the server says it in its offer, the client in its first step.
const Version = 10600

// versionSignedDH is the first version whose DH values are signed
// (XrdSecgsiVersDHsigned): the proof that the client holds its key
// rests on them, so older clients are refused.
const versionSignedDH = 10400

// The steps: the client's (1000…) and the server's (2000…).
const (
	StepCertReq    int32 = 1000 // client: "send me your certificate"
	StepCert       int32 = 1001 // client: its chain, DH value, signed tag
	StepSigPxy     int32 = 1002 // client: a delegated proxy (never asked here)
	StepServerCert int32 = 2001 // server: its certificate and DH value
)

// The digest names offered. XRootD picks the first it supports and
// names it back; no digest is used in the exchange itself.
const digestNames = "sha256"

// VerifyFunc checks a client's chain, leaf first, at a time, and says
// whom it identifies; the error says why it is refused. The handshake
// has proven that the client holds the leaf's key before it is called.
type VerifyFunc func(chain []*x509.Certificate, at time.Time) (*store.Identity, error)

// Config is a gsi server's credential and trust.
type Config struct {
	// Cert and Key are the host credential: an RSA end-entity
	// certificate, issued by a CA the clients have in their
	// X509_CERT_DIR, for the names clients dial (XrdCl checks its SAN,
	// else its CN), and its key.
	Cert *x509.Certificate
	Key  *rsa.PrivateKey
	// Verify checks client chains. Required.
	Verify VerifyFunc
	// KnownCA reports whether the CA a client names by hash ("1a2b3c4d.0")
	// is trusted, so a client of an unknown CA is refused at the first
	// step, as by xrootd. Nil: Verify alone decides, at the second step.
	KnownCA func(hash string) bool
	// Concurrency bounds the handshake steps computing at once, server
	// wide (default half the CPUs, at least one): a step costs several
	// RSA and DH operations, and a flood of them must leave CPU for the
	// sessions moving data. Steps beyond it wait their turn.
	Concurrency int
	// Timeout is how long a client may take between its two steps
	// (default 2 minutes; xrootd allows 5).
	Timeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Server answers the gsi exchanges of many sessions. It is safe for
// concurrent use; each session has a Handshake of its own.
type Server struct {
	cfg     Config
	grp     *dhGroup
	offer   string
	certPEM []byte
	slots   chan struct{}

	shareMu sync.Mutex // protects share
	share   *dhShare   // the DH key offered now (dhshare.go)
}

// New checks the credential and builds a server.
func New(cfg Config) (*Server, error) {
	if cfg.Cert == nil || cfg.Key == nil || cfg.Verify == nil {
		return nil, errors.New("gsi: a host certificate, its key and a chain verifier are needed")
	}
	if err := checkHostCredential(cfg.Cert, cfg.Key); err != nil {
		return nil, fmt.Errorf("gsi: host certificate %s: %w", certName(cfg.Cert), err)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hashes, err := IssuerHashes(cfg.Cert)
	if err != nil {
		return nil, fmt.Errorf("gsi: host certificate: %w", err)
	}
	return &Server{
		cfg:     cfg,
		grp:     newDHGroup(),
		offer:   fmt.Sprintf("gsi,v:%d,c:ssl,ca:%s", Version, hashes),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cfg.Cert.Raw}),
		slots:   make(chan struct{}, cfg.Concurrency),
	}, nil
}

// checkHostCredential requires what XRootD clients take from a server:
// an end-entity certificate (xrootd loads no other) with an RSA key that
// the private key matches.
func checkHostCredential(cert *x509.Certificate, key *rsa.PrivateKey) error {
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	switch {
	case !ok:
		return fmt.Errorf("its key is %T: gsi needs RSA", cert.PublicKey)
	case !key.PublicKey.Equal(pub):
		return errors.New("the key does not match it")
	case cert.IsCA:
		return errors.New("it is a CA certificate: gsi needs an end-entity (host) certificate issued by a CA")
	case bytes.Equal(cert.RawIssuer, cert.RawSubject):
		return errors.New("it is self-signed: gsi needs a host certificate issued by a CA the clients trust")
	}
	return nil
}

// IssuerHashes is how the offer names the CA of cert, as xrootd's:
// "<hash>.0|<old hash>.0", OpenSSL's hashes of the issuer's name under
// which clients look the CA up in their X509_CERT_DIR.
func IssuerHashes(cert *x509.Certificate) (string, error) {
	h, err := x509grid.SubjectHash(cert.RawIssuer)
	if err != nil {
		return "", fmt.Errorf("issuer name: %w", err)
	}
	return fmt.Sprintf("%08x.0|%08x.0", h, x509grid.SubjectHashOld(cert.RawIssuer)), nil
}

// Offer is the login answer's entry for gsi (after "&P="): version,
// crypto module and the hashes of the host certificate's CA.
func (s *Server) Offer() string { return s.offer }

// acquire takes a computing slot, or gives up when ctx ends.
func (s *Server) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) release() { <-s.slots }

// certName is a certificate's subject as grid tools print it.
func certName(c *x509.Certificate) string {
	if n, err := x509grid.SlashName(c.RawSubject); err == nil {
		return n
	}
	return c.Subject.String()
}
