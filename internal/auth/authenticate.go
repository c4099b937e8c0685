package auth

import (
	"context"
	"crypto/x509"
	"log/slog"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid"
)

// How an identity was proven (store.Identity.Method).
const (
	MethodToken = "token" // a bearer token (ztn, Authorization: Bearer, authz=)
	MethodKrb5  = "krb5"  // a Kerberos ticket (krb5, SPNEGO)
	MethodX509  = "x509"  // an X.509 chain (gsi, a TLS client certificate)
)

// Credential is what a client presented, as its frontend's handshake
// left it: a Token, a KerberosTicket, a Negotiate value or a verified
// Chain. A nil Credential is no credential (anonymous). The set is
// closed: a new kind is a new type here and a case in Authenticate.
type Credential interface {
	method() string
}

// Token is a bearer token (a JWT), without "Bearer ".
type Token string

// KerberosTicket is a Kerberos AP-REQ addressed to one of the box's
// principals of Service ("xrootd" for root://).
type KerberosTicket struct {
	APReq   []byte
	Service string
}

// Negotiate is the value of an "Authorization: Negotiate" header: base64
// SPNEGO (or a bare Kerberos GSS token) for the box's HTTP principal.
type Negotiate string

// Chain is an X.509 chain, leaf first, whose leaf's key the client has
// proven to hold (the TLS handshake, gsi's signed exchange), to be
// verified at At (zero: now).
type Chain struct {
	Certs []*x509.Certificate
	At    time.Time
}

func (Token) method() string          { return MethodToken }
func (KerberosTicket) method() string { return MethodKrb5 }
func (Negotiate) method() string      { return MethodKrb5 }
func (Chain) method() string          { return MethodX509 }

// Kerberos verifies Kerberos credentials (krb5auth.Authenticator).
type Kerberos interface {
	// Principal is the service principal announced for svc, "" if none.
	Principal(svc string) string
	VerifyAPReq(raw []byte, svc string) (*store.Identity, error)
	VerifyNegotiate(token string) (*store.Identity, error)
}

// ChainIdentifier verifies X.509 chains (*X509).
type ChainIdentifier interface {
	Identify(chain []*x509.Certificate, at time.Time) (*store.Identity, *x509grid.Result, error)
}

// Verifiers are the checks an Authenticator hands each kind of
// credential to. A nil one means the box takes no credential of that
// kind (never a typed nil in an interface).
type Verifiers struct {
	Tokens   store.TokenVerifier
	Kerberos Kerberos
	X509     ChainIdentifier
}

// Authenticator is the one entry point credentials enter by (see the
// package documentation). A nil *Authenticator takes no credential: every
// one is refused, and no credential is anonymous. It is safe for
// concurrent use.
type Authenticator struct {
	v   Verifiers
	log *slog.Logger
}

// NewAuthenticator takes the credentials v has verifiers for; log (nil:
// discard) hears what of an accepted credential was not taken.
func NewAuthenticator(v Verifiers, log *slog.Logger) *Authenticator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Authenticator{v: v, log: log.With("component", "auth")}
}

// Takes reports whether credentials proven by method (Method*)
// are verified here, for the frontends to offer (root://'s security
// protocols, https' challenges).
func (a *Authenticator) Takes(method string) bool {
	if a == nil {
		return false
	}
	switch method {
	case MethodToken:
		return a.v.Tokens != nil
	case MethodKrb5:
		return a.v.Kerberos != nil
	case MethodX509:
		return a.v.X509 != nil
	}
	return false
}

// KerberosPrincipal is the principal root:// announces for service svc
// ("xrootd"), "" when the box takes no Kerberos tickets for it.
func (a *Authenticator) KerberosPrincipal(svc string) string {
	if !a.Takes(MethodKrb5) {
		return ""
	}
	return a.v.Kerberos.Principal(svc)
}

// Authenticate verifies c and returns the identity it proves, its
// Method saying how; nil and no error for no credential (anonymous). The
// error is the refusal, fit to show the client: the verifier's reason,
// or that this box takes no credential of c's kind. A refused
// credential never becomes anonymous: the caller keeps the error.
func (a *Authenticator) Authenticate(ctx context.Context, c Credential) (*store.Identity, error) {
	if c == nil {
		return nil, nil
	}
	if !a.Takes(c.method()) {
		return nil, notTaken(c.method())
	}
	var id *store.Identity
	var err error
	switch c := c.(type) {
	case Token:
		id, err = a.v.Tokens.Verify(ctx, string(c))
	case KerberosTicket:
		id, err = a.v.Kerberos.VerifyAPReq(c.APReq, c.Service)
	case Negotiate:
		id, err = a.v.Kerberos.VerifyNegotiate(string(c))
	case Chain:
		id, err = a.chain(c)
	}
	if err != nil {
		return nil, err
	}
	if id == nil {
		return nil, deny("%s credential proved no identity", c.method())
	}
	// The method is the entry point's word, not the verifier's: whatever
	// a verifier returns, it is stamped with how it was checked here.
	out := *id
	out.Method = c.method()
	return &out, nil
}

// chain verifies an X.509 chain; what of it was accepted with a doubt
// (a stale CRL under crl = try) or not taken (an attribute certificate
// of an unlisted VOMS server) is logged here, once, for every frontend.
func (a *Authenticator) chain(c Chain) (*store.Identity, error) {
	at := c.At
	if at.IsZero() {
		at = time.Now()
	}
	id, res, err := a.v.X509.Identify(c.Certs, at)
	if err != nil {
		return nil, err
	}
	if res != nil {
		for _, ac := range res.RejectedACs {
			a.log.Info("VOMS attributes not accepted", "subject", res.Subject, "reason", ac.Error())
		}
		for _, w := range res.Warnings {
			a.log.Warn("X.509 credential accepted with a warning", "subject", res.Subject, "warning", w)
		}
	}
	return id, nil
}

// notTaken refuses a credential of a kind the box has no verifier for.
func notTaken(method string) error {
	switch method {
	case MethodToken:
		return deny("this box takes no bearer tokens")
	case MethodKrb5:
		return deny("this box takes no Kerberos tickets")
	case MethodX509:
		return deny("this box takes no X.509 credentials")
	}
	return deny("credential of kind %q is not taken here", method)
}

// LogAttrs are the log attributes naming id: its issuer, subject (an
// X.509 DN) and groups, how it was proven ("auth", the access log's word
// too: "method" is HTTP's), and an X.509 identity's FQANs. Log lines
// about an identity use them, so they read alike.
func LogAttrs(id *store.Identity) []any {
	if id == nil {
		return []any{"auth", "anonymous"}
	}
	attrs := []any{"issuer", id.Issuer, "subject", id.Subject, "groups", id.Groups, "auth", id.Method}
	if len(id.FQANs) > 0 {
		attrs = append(attrs, "fqans", id.FQANs)
	}
	return attrs
}

// TokenFunc makes a function a store.TokenVerifier.
type TokenFunc func(ctx context.Context, raw string) (*store.Identity, error)

// Verify calls f.
func (f TokenFunc) Verify(ctx context.Context, raw string) (*store.Identity, error) {
	return f(ctx, raw)
}
