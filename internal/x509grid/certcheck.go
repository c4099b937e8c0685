package x509grid

import (
	"crypto/x509"
	"fmt"
)

// link is one certificate of the chain being verified.
type link struct {
	cert      *x509.Certificate
	name      name // parsed subject
	subject   string
	pos       int
	fromCADir bool
	proxy     proxyInfo
}

func newLink(c *x509.Certificate, pos int) (*link, error) {
	n, err := parseName(c.RawSubject)
	if err != nil {
		return nil, err
	}
	if _, err := n.canonical(); err != nil {
		return nil, err
	}
	if _, err := parseName(c.RawIssuer); err != nil {
		return nil, fmt.Errorf("issuer: %w", err)
	}
	return &link{cert: c, name: n, subject: n.slash(), pos: pos}, nil
}

func (l *link) isCA() bool { return l.cert.BasicConstraintsValid && l.cert.IsCA }

// fail names l in err.
func (l *link) fail(err error) *CertError {
	return &CertError{Position: l.pos, Subject: l.subject, FromCADir: l.fromCADir, Err: err}
}

// weakSignature reports the signature algorithms refused on anything a
// client presents: MD5 and SHA-1 allow forged certificates.
func weakSignature(a x509.SignatureAlgorithm) bool {
	switch a {
	case x509.UnknownSignatureAlgorithm, x509.MD2WithRSA, x509.MD5WithRSA,
		x509.SHA1WithRSA, x509.DSAWithSHA1, x509.ECDSAWithSHA1:
		return true
	}
	return false
}

// checkSignedBy verifies child's signature with parent's public key.
// crypto/x509's CheckSignatureFrom would refuse a parent that is no CA,
// which every proxy's issuer is.
func checkSignedBy(child, parent *x509.Certificate) error {
	if weakSignature(child.SignatureAlgorithm) {
		return reason(ErrSignature, "signed with %v, which is refused", child.SignatureAlgorithm)
	}
	if err := parent.CheckSignature(child.SignatureAlgorithm, child.RawTBSCertificate, child.Signature); err != nil {
		return reason(ErrSignature, "%v", err)
	}
	return nil
}

// Extensions that may be critical: those crypto/x509 parses and this
// package either enforces (basic constraints, key usage, proxyCertInfo)
// or that grant nothing (names, key identifiers, policies, where to
// find CRLs). Any other critical extension makes a certificate unusable
// (RFC 5280 4.2).
func criticalAllowed(oid string, proxy bool) bool {
	switch oid {
	case "2.5.29.19", // basicConstraints
		"2.5.29.15",         // keyUsage
		"2.5.29.37",         // extKeyUsage
		"2.5.29.17",         // subjectAltName
		"2.5.29.18",         // issuerAltName
		"2.5.29.14",         // subjectKeyIdentifier
		"2.5.29.35",         // authorityKeyIdentifier
		"2.5.29.32",         // certificatePolicies
		"2.5.29.31",         // cRLDistributionPoints
		"1.3.6.1.5.5.7.1.1": // authorityInfoAccess
		return true
	case oidProxyCertInfo:
		return proxy
	}
	return false
}

func checkCriticalExtensions(c *x509.Certificate, proxy bool) error {
	for _, ext := range c.Extensions {
		if ext.Critical && !criticalAllowed(ext.Id.String(), proxy) {
			return reason(ErrCriticalExtension, "%v", ext.Id)
		}
	}
	return nil
}

// checkEndEntity applies the rules of a user's (or a VOMS server's)
// certificate; issuesProxy says whether a proxy follows it.
func checkEndEntity(e *link, issuesProxy bool) error {
	c := e.cert
	if e.isCA() {
		if issuesProxy {
			return reason(ErrNotEndEntity, "a CA certificate (basic constraints CA:TRUE) cannot issue proxies")
		}
		return reason(ErrNotEndEntity, "a CA certificate (basic constraints CA:TRUE) is no user credential")
	}
	// Whether it signs a proxy or a handshake, the key of an end-entity
	// certificate is used for signatures.
	if c.KeyUsage != 0 && c.KeyUsage&x509.KeyUsageDigitalSignature == 0 {
		return reason(ErrNotEndEntity, "key usage lacks digitalSignature")
	}
	return checkCriticalExtensions(c, false)
}

// checkCA applies the rules of a CA certificate of the path; below is
// how many CA certificates lie between it and the end-entity
// certificate (0 for the end-entity's issuer).
func checkCA(ca *caCert, below int) error {
	c := ca.cert
	if !c.BasicConstraintsValid || !c.IsCA {
		return reason(ErrCA, "no basic constraints CA:TRUE")
	}
	if c.KeyUsage != 0 && c.KeyUsage&x509.KeyUsageCertSign == 0 {
		return reason(ErrCA, "key usage lacks keyCertSign")
	}
	for _, ext := range c.Extensions {
		// Name constraints are not implemented: a CA that sets them is
		// refused rather than trusted beyond them.
		if ext.Id.String() == "2.5.29.30" {
			return reason(ErrCA, "name constraints are not supported")
		}
	}
	if (c.MaxPathLen > 0 || c.MaxPathLenZero) && below > c.MaxPathLen {
		return reason(ErrPathLength, "%d CA certificates below it, its path length allows %d", below, c.MaxPathLen)
	}
	return checkCriticalExtensions(c, false)
}
