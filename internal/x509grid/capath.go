package x509grid

import (
	"crypto/x509"
	"time"
)

// caPath finds and checks the CA certificates above the end-entity
// certificate ee, from its issuer to a self-signed root, all taken from
// the CA directory: CA certificates a client sends along are never
// trusted, so intermediate CAs must be installed there (as the IGTF
// distribution does). It returns the path and any CRL warnings.
func (v *Verifier) caPath(ee *link, at time.Time) ([]*caCert, []string, error) {
	var (
		path     []*caCert
		warnings []string
		seen     = map[*caCert]bool{}
	)
	child := ee
	for below := 0; ; below++ {
		if below == v.lim.MaxCADepth {
			return nil, nil, child.fail(reason(ErrUnknownCA, "no self-signed root within %d CA certificates", v.lim.MaxCADepth))
		}
		ca, err := v.findIssuer(child.cert, at, seen)
		if err != nil {
			return nil, nil, child.fail(err)
		}
		seen[ca] = true
		caLink := &link{cert: ca.cert, subject: ca.subject, pos: child.pos + 1, fromCADir: true}
		if err := checkCA(ca, below); err != nil {
			return nil, nil, caLink.fail(err)
		}
		if err := v.inValidity(ca.cert.NotBefore, ca.cert.NotAfter, at); err != nil {
			return nil, nil, caLink.fail(err)
		}
		warn, err := v.checkRevocation(child.cert, ca, at)
		if err != nil {
			return nil, nil, child.fail(err)
		}
		if warn != "" {
			warnings = append(warnings, warn)
		}
		path = append(path, ca)
		if ca.selfSigned {
			return path, warnings, nil
		}
		child = caLink
	}
}

// findIssuer picks, among the CA directory's certificates named as
// cert's issuer, one whose key verifies cert's signature, preferring one
// valid at at (a CA renewed with the same key leaves both in the
// directory). There is no backtracking: if the pick's own issuer is
// missing, other candidates are not tried.
func (v *Verifier) findIssuer(cert *x509.Certificate, at time.Time, seen map[*caCert]bool) (*caCert, error) {
	key, err := canonicalKey(cert.RawIssuer)
	if err != nil {
		return nil, reason(ErrMalformed, "issuer name: %v", err)
	}
	cands := v.cas.bySubject[key]
	if len(cands) == 0 {
		issuer, _ := SlashName(cert.RawIssuer)
		return nil, reason(ErrUnknownCA, "its issuer %s is not in the CA directory", issuer)
	}
	if weakSignature(cert.SignatureAlgorithm) {
		return nil, reason(ErrSignature, "signed with %v, which is refused", cert.SignatureAlgorithm)
	}
	var verified *caCert
	for _, ca := range cands {
		if seen[ca] || checkSignedBy(cert, ca.cert) != nil {
			continue
		}
		if v.inValidity(ca.cert.NotBefore, ca.cert.NotAfter, at) == nil {
			return ca, nil
		}
		if verified == nil {
			verified = ca
		}
	}
	if verified != nil {
		return verified, nil
	}
	return nil, reason(ErrSignature, "its signature does not verify with the key of %s (CA directory: %s)", cands[0].subject, cands[0].file)
}
