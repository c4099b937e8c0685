package director

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sitebox/internal/store"
)

// requestTag starts a join request's text form, which is one shell word
// (base64url) so it survives a copy into a mail or a chat.
const requestTag = "sbxjoin1."

// maxRequestLen bounds a join request an operator pastes.
const maxRequestLen = 64 << 10

// Request is what `sitebox federation join` prints for the director's
// operator: the member record the box asks for, signed with the key it
// names (so a mangled or edited request is caught at approval).
type Request struct {
	Member
	// Director is the URL the box will advertise to, shown to the
	// approving operator.
	Director string `json:"director,omitempty"`
	// TLSKey is the box's TLS public key (base64 PKIX DER), for which a
	// director that is its federation's CA issues the box's server
	// certificate at approval. Signed with the rest, so the certificate
	// goes to the key of the box that asked.
	TLSKey string `json:"tls_key,omitempty"`
}

// TLSPublicKey is the key TLSKey names, or an error saying what is wrong.
func (r Request) TLSPublicKey() (crypto.PublicKey, error) {
	if r.TLSKey == "" {
		return nil, fmt.Errorf("the request of %s names no TLS key (its sitebox predates certificates from the director: upgrade it and run join again)", r.Name)
	}
	der, err := base64.StdEncoding.DecodeString(r.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("the request's TLS key is not base64")
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("the request's TLS key: %w", err)
	}
	switch pub.(type) {
	case *ecdsa.PublicKey, ed25519.PublicKey:
		return pub, nil
	}
	return nil, fmt.Errorf("the request's TLS key is a %T, want ECDSA or Ed25519", pub)
}

// Encode returns the request's text form, signed with key.
func (r Request) Encode(key ed25519.PrivateKey) (string, error) {
	r.Key = FormatKey(key.Public().(ed25519.PublicKey))
	r.Approved, r.Static = time.Time{}, false
	body, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return requestTag + enc.EncodeToString(body) + "." + enc.EncodeToString(ed25519.Sign(key, body)), nil
}

// DecodeRequest reads and checks a join request's text form.
func DecodeRequest(s string) (Request, error) {
	s = strings.TrimSpace(s)
	if len(s) > maxRequestLen {
		return Request{}, fmt.Errorf("join request is %d bytes: too long", len(s))
	}
	rest, ok := strings.CutPrefix(s, requestTag)
	body64, sig64, ok2 := strings.Cut(rest, ".")
	if ok && !ok2 {
		return Request{}, fmt.Errorf("join request is damaged (no signature part): was it cut when copied?")
	}
	if !ok {
		return Request{}, fmt.Errorf("not a join request (it starts %q; `sitebox federation join` prints one starting %q)", abbrev(s, 12), requestTag)
	}
	enc := base64.RawURLEncoding
	body, err := enc.DecodeString(body64)
	sig, err2 := enc.DecodeString(sig64)
	if err != nil || err2 != nil {
		return Request{}, fmt.Errorf("join request is damaged (not base64url): was it cut or wrapped when copied?")
	}
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return Request{}, fmt.Errorf("join request is damaged: %w", err)
	}
	pub, err := ParseKey(r.Key)
	if err != nil {
		return Request{}, fmt.Errorf("join request: %w", err)
	}
	if !ed25519.Verify(pub, body, sig) {
		return Request{}, fmt.Errorf("join request's signature does not match its key: it was changed after `sitebox federation join` printed it")
	}
	if err := r.Member.Check(); err != nil {
		return Request{}, fmt.Errorf("join request: %w", err)
	}
	return r, nil
}

// Approve makes the member record, narrowed to the prefixes given (each
// at or below a requested one; none: as requested).
//
// The record binds a name to a key the way a certificate would; a
// federation CA could later sign the same fields at approval and hand the
// box a certificate for client-authenticated TLS, with this record as
// what the certificate is checked against.
func (r Request) Approve(prefixes []string, now time.Time) (Member, error) {
	m := r.Member
	m.Approved, m.Static = now.UTC().Round(time.Second), false
	if len(prefixes) == 0 {
		return m, nil
	}
	var narrowed []string
	for _, p := range prefixes {
		c, err := store.CleanPath(p)
		if err != nil || c != p {
			return Member{}, fmt.Errorf("prefix %q is not a clean namespace path", p)
		}
		if !r.grants(p) {
			return Member{}, fmt.Errorf("prefix %q is not at or below a requested prefix (%s): approval can only narrow a request", p, strings.Join(r.Prefixes, ", "))
		}
		narrowed = append(narrowed, p)
	}
	m.Prefixes = narrowed
	return m, nil
}

func abbrev(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
