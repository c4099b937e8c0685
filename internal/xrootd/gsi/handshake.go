package gsi

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"sitebox/internal/store"
)

// protocolName names gsi buffers and the kXR_auth credential type.
const protocolName = "gsi"

// maxStarts is how many exchanges one connection may begin: XrdCl
// starts one (two if it retries), and each start costs the server
// several RSA operations.
const maxStarts = 3

// Handshake is one connection's gsi exchange: the client's step 1000
// is answered with the server's certificate and DH value (2001), its
// step 1001 with an identity. It is not safe for concurrent use: a
// session's requests are read, and its kXR_auth answered, one at a time.
type Handshake struct {
	srv     *Server
	starts  int
	pending *pending // between the two steps, nil otherwise
}

// pending is what the server keeps between the client's two steps.
type pending struct {
	tag    []byte // the challenge sent, which must come back signed
	dh     *dhKey // the server's key offered in the answer (dhshare.go)
	padded bool   // the shared secret is padded to the size of p
	sent   time.Time
}

// Outcome is a step's result: a Reply to send with kXR_authmore, or the
// Identity the finished exchange proved.
type Outcome struct {
	Reply    []byte
	Identity *store.Identity
}

// Handshake starts the exchange of one connection.
func (s *Server) Handshake() *Handshake { return &Handshake{srv: s} }

// Step answers one kXR_auth credential of type gsi. An error is the
// refusal to send the client (it holds no secret); the exchange is then
// over, and a new one starts with step 1000. The challenge a step sends
// is checked by the next step only, so a step can never be replayed.
func (h *Handshake) Step(ctx context.Context, cred []byte) (Outcome, error) {
	p := h.pending
	h.pending = nil
	buf, err := ParseBuffer(cred)
	if err == nil && buf.Protocol != protocolName {
		err = fmt.Errorf("%w: protocol %q, not gsi", ErrMalformed, buf.Protocol)
	}
	if err != nil {
		return Outcome{}, err
	}
	switch buf.Step {
	case StepCertReq:
		if h.starts++; h.starts > maxStarts {
			return Outcome{}, fmt.Errorf("more than %d gsi exchanges on one connection", maxStarts)
		}
		return h.certReq(ctx, buf)
	case StepCert:
		if p == nil {
			return Outcome{}, errors.New("protocol error: the certificate step (1001) came before the certificate request (1000)")
		}
		if age := h.srv.cfg.Now().Sub(p.sent); age > h.srv.cfg.Timeout {
			return Outcome{}, fmt.Errorf("the exchange expired: the certificate step came %s after the request (limit %s)", age.Round(time.Second), h.srv.cfg.Timeout)
		}
		return h.cert(ctx, buf, p)
	case StepSigPxy:
		return Outcome{}, errors.New("protocol error: a delegated proxy (step 1002) was not asked for: this server takes no delegation")
	}
	return Outcome{}, fmt.Errorf("protocol error: unknown step %d", buf.Step)
}

// A challenge is what XRootD's XrdSutRndm::GetRndmTag makes: 8
// characters of crypt's alphabet. Both sides sign the other's challenge
// raw, so a "challenge" shaped like a DigestInfo would turn the host key
// into a signing oracle for arbitrary hashes (TLS included, the key being
// the https one). A signer therefore takes this exact shape only, as
// XrdCl 6 does: 48 random bits, no digest of any kind is 8 bytes long.
const (
	tagLen      = 8
	tagAlphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// newTag is a fresh challenge.
func newTag() ([]byte, error) {
	b := make([]byte, tagLen)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	for i := range b {
		b[i] = tagAlphabet[b[i]&63]
	}
	return b, nil
}

// validTag reports whether b has a challenge's shape, and so may be
// signed.
func validTag(b []byte) bool {
	if len(b) != tagLen {
		return false
	}
	for _, c := range b {
		if !strings.ContainsRune(tagAlphabet, rune(c)) {
			return false
		}
	}
	return true
}

// compute runs f holding one of the server's computing slots.
func (h *Handshake) compute(ctx context.Context, f func() error) error {
	if err := h.srv.acquire(ctx); err != nil {
		return fmt.Errorf("gsi exchange abandoned: %w", err)
	}
	defer h.srv.release()
	return f()
}
