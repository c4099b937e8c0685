package webdav

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// Authenticator verifies a credential and says who it proves
// (auth.Authenticator); ClientCerts hands it the chain TLS received.
type Authenticator interface {
	Authenticate(ctx context.Context, c auth.Credential) (*store.Identity, error)
}

// ClientCerts authenticates https clients by the certificate chain they
// presented in the TLS handshake: grid users' X.509 proxies, with their
// VOMS attributes. The listener asks for certificates and verifies none
// itself (Go's TLS refuses proxy certificates); TLS has proven that the
// client holds the leaf's key (its CertificateVerify is checked against
// the leaf's public key, in TLS 1.2 and 1.3), and the chain is verified
// by the authenticator (auth.Chain), once per connection: ConnContext
// gives each connection its slot, so a keep-alive connection's requests
// reuse the first verification until the identity expires, and the
// memory is the connection's, released with it. Go's TLS server never renegotiates, so a
// connection's chain cannot change. Safe for concurrent use.
type ClientCerts struct {
	id  Authenticator
	now func() time.Time
	log *slog.Logger
}

// NewClientCerts verifies chains with id; log may be nil.
func NewClientCerts(id Authenticator, log *slog.Logger) *ClientCerts {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ClientCerts{id: id, now: time.Now, log: log}
}

// certSlot is one connection's verification.
type certSlot struct {
	mu sync.Mutex
	certOutcome
}

// certOutcome is what one verification found.
type certOutcome struct {
	leaf []byte // the verified chain's leaf, DER
	done bool
	id   *store.Identity
	note string
	err  error
}

type certSlotKey struct{}

// ConnContext is the http.Server hook giving each connection its slot.
func (c *ClientCerts) ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, certSlotKey{}, &certSlot{})
}

// CertificateError is a client certificate chain that was refused.
type CertificateError struct{ Err error }

func (e *CertificateError) Error() string { return "client certificate refused: " + e.Err.Error() }
func (e *CertificateError) Unwrap() error { return e.Err }

// Identity is who the request's client certificate proves: nil and no
// error without a certificate; a *CertificateError for a chain refused
// (or expired since the connection verified it). note says what of the
// credential was not accepted although the chain was (a VOMS attribute
// certificate of an unlisted server), for refusals to explain.
func (c *ClientCerts) Identity(r *http.Request) (id *store.Identity, note string, err error) {
	if c == nil || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return nil, "", nil
	}
	slot, _ := r.Context().Value(certSlotKey{}).(*certSlot)
	if slot == nil {
		slot = &certSlot{} // a server without ConnContext: verified per request
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	now := c.now()
	chain := r.TLS.PeerCertificates
	if !slot.done || !bytes.Equal(slot.leaf, chain[0].Raw) || slot.id != nil && now.After(slot.id.Expires) {
		c.verify(slot, r, chain, now)
	}
	return slot.id, slot.note, slot.err
}

// verify fills slot with what chain proves at now, logging the outcome
// once per connection.
func (c *ClientCerts) verify(slot *certSlot, r *http.Request, chain []*x509.Certificate, now time.Time) {
	slot.certOutcome = certOutcome{leaf: chain[0].Raw, done: true}
	id, err := c.id.Authenticate(r.Context(), auth.Chain{Certs: chain, At: now})
	if err != nil {
		slot.err = &CertificateError{Err: err}
		c.log.Info("client certificate refused", "client", r.RemoteAddr, "subject", slashName(chain[0]), "reason", err.Error())
		return
	}
	slot.id = id
	slot.note = strings.Join(id.Ignored, "; ")
	c.log.Debug("authenticated", append([]any{"protocol", "x509", "client", r.RemoteAddr}, auth.LogAttrs(id)...)...)
}

// slashName names a refused certificate in the log as grid tools print
// names (the chain did not verify, so this is only what it claims).
func slashName(c *x509.Certificate) string {
	if s, err := x509grid.SlashName(c.RawSubject); err == nil {
		return s
	}
	return fmt.Sprintf("%q", c.Subject.String())
}
