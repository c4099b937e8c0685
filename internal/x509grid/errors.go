package x509grid

import (
	"errors"
	"fmt"
)

// The reasons a credential is refused. A refusal is a *CertError (or an
// *ACError for an attribute certificate) naming the certificate, which
// unwraps to one of these, so callers can tell them apart with errors.Is.
var (
	// ErrMalformed: the input or a certificate cannot be parsed, or
	// breaks a size limit.
	ErrMalformed = errors.New("malformed")
	// ErrUnknownCA: the issuer is in no certificate of the CA directory,
	// or the CA path ends at no self-signed root of it.
	ErrUnknownCA = errors.New("issued by no CA of the CA directory")
	// ErrExpired and ErrNotYetValid: outside the validity period.
	ErrExpired     = errors.New("expired")
	ErrNotYetValid = errors.New("not yet valid")
	// ErrRevoked: listed in its CA's CRL.
	ErrRevoked = errors.New("revoked")
	// ErrCRL: the CA's CRL is missing, invalid or out of date where the
	// CRL policy requires one.
	ErrCRL = errors.New("CRL check failed")
	// ErrSignature: the signature does not verify with the issuer's key,
	// or uses an algorithm refused here (MD5, SHA-1).
	ErrSignature = errors.New("bad signature")
	// ErrProxy: a proxy certificate breaks RFC 3820 (its name, its
	// proxyCertInfo, its issuer, its key usage).
	ErrProxy = errors.New("invalid proxy certificate")
	// ErrLegacyProxy: a Globus GT2 ("CN=proxy") or GT3 (draft
	// proxyCertInfo) proxy where only RFC 3820 proxies are accepted.
	ErrLegacyProxy = errors.New("legacy Globus proxy not accepted")
	// ErrPathLength: more proxies, or more CAs, below a certificate than
	// its path length constraint allows.
	ErrPathLength = errors.New("path length exceeded")
	// ErrNotEndEntity: a CA certificate where a user's (end-entity)
	// certificate or a proxy issuer belongs, or a second end-entity.
	ErrNotEndEntity = errors.New("not an end-entity certificate")
	// ErrCA: a certificate of the CA path is not fit to be a CA (no CA
	// basic constraint, no keyCertSign, unsupported name constraints).
	ErrCA = errors.New("not a usable CA certificate")
	// ErrCriticalExtension: a critical extension this package does not
	// process, which RFC 5280 says makes the certificate unusable.
	ErrCriticalExtension = errors.New("unhandled critical extension")
	// ErrVOMS: an attribute certificate is refused (see ACError).
	ErrVOMS = errors.New("VOMS attribute certificate refused")
	// ErrUntrustedVOMS: the AC's VOMS server is not listed in the
	// vomsdir for the AC's VO.
	ErrUntrustedVOMS = errors.New("VOMS server not trusted for this VO")
	// ErrHolder: the AC was issued to another certificate than the
	// chain's end-entity certificate.
	ErrHolder = errors.New("issued to another user")
)

// CertError is the refusal of one certificate of a chain.
type CertError struct {
	// Position counts from the certificate presented first (0, the proxy
	// whose key the client proved) up the chain: the presented
	// certificates, then those of the CA directory.
	Position int
	// Subject is the certificate's name in slash form.
	Subject string
	// FromCADir is set for certificates taken from the CA directory.
	FromCADir bool
	// Err is the reason, wrapping one of the Err* values.
	Err error
}

func (e *CertError) Error() string {
	where := ""
	if e.FromCADir {
		where = ", from the CA directory"
	}
	return fmt.Sprintf("certificate %d (%s%s): %v", e.Position, e.Subject, where, e.Err)
}

func (e *CertError) Unwrap() error { return e.Err }

// ACError is the refusal of one VOMS attribute certificate. The chain
// itself may still be accepted: the AC's VO simply does not count.
type ACError struct {
	// Index is the AC's place in the VOMS extension (0 first).
	Index int
	// VO and Issuer (the VOMS server's name, slash form) as the AC
	// claims them; empty when the AC could not be read that far.
	VO     string
	Issuer string
	// Err is the reason, wrapping ErrVOMS and, where one applies, another
	// of the Err* values (ErrExpired, ErrSignature…).
	Err error
}

func (e *ACError) Error() string {
	who := ""
	if e.VO != "" {
		who = " of VO " + e.VO
	}
	if e.Issuer != "" {
		who += " from " + e.Issuer
	}
	return fmt.Sprintf("VOMS attribute certificate %d%s: %v", e.Index, who, e.Err)
}

func (e *ACError) Unwrap() []error { return []error{ErrVOMS, e.Err} }

// reason wraps a sentinel with details: reason(ErrExpired, "at %s", t).
func reason(kind error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))
}
