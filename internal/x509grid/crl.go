package x509grid

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"time"
)

// crlSet is what the CA directory's CRLs say about one CA (by canonical
// name): the serials revoked by the CRLs that verify, and why any other
// CRL file of the CA is unusable.
type crlSet struct {
	caSubject string
	// revoked maps a serial (decimal) to its entry, from every CRL of
	// the CA that verified.
	revoked map[string]x509.RevocationListEntry
	// thisUpdate and nextUpdate bound the newest CRL that verified; zero
	// when none did.
	thisUpdate, nextUpdate time.Time
	// unusable is why a CRL file of this CA could not be used ("" if
	// none failed).
	unusable string
}

// loadCRLFile reads one <hash>.rN file (PEM or DER) and files it under
// its issuer; a CRL no CA of the directory signed is recorded as
// unusable for the CA it names, so the CRL policy decides.
func (d *caDir) loadCRLFile(path string, lim Limits) {
	base := filepath.Base(path)
	data, err := readBounded(path, lim.MaxCRLSize)
	if err != nil {
		d.warnf("%s: %v", base, err)
		return
	}
	if b, _ := pem.Decode(data); b != nil && b.Type == "X509 CRL" {
		data = b.Bytes
	}
	crl, err := x509.ParseRevocationList(data)
	if err != nil {
		d.warnf("%s: not a CRL: %v", base, err)
		return
	}
	key, err := canonicalKey(crl.RawIssuer)
	if err != nil {
		d.warnf("%s: %v", base, err)
		return
	}
	set := d.crls[key]
	if set == nil {
		subject, _ := SlashName(crl.RawIssuer)
		set = &crlSet{caSubject: subject, revoked: map[string]x509.RevocationListEntry{}}
		d.crls[key] = set
	}
	if err := d.checkCRL(crl, key); err != nil {
		set.unusable = fmt.Sprintf("%s: %v", base, err)
		d.warnf("%s: CRL of %s not used: %v", base, set.caSubject, err)
		return
	}
	for _, e := range crl.RevokedCertificateEntries {
		set.revoked[e.SerialNumber.String()] = e
	}
	if crl.ThisUpdate.After(set.thisUpdate) {
		set.thisUpdate, set.nextUpdate = crl.ThisUpdate, crl.NextUpdate
	}
}

// checkCRL verifies a CRL's signature with a CA certificate of its
// issuer's name and refuses what this package does not implement (delta
// and indirect CRLs, critical extensions).
func (d *caDir) checkCRL(crl *x509.RevocationList, key string) error {
	for _, ext := range crl.Extensions {
		if ext.Critical {
			return fmt.Errorf("critical extension %v not supported", ext.Id)
		}
	}
	for _, e := range crl.RevokedCertificateEntries {
		for _, ext := range e.Extensions {
			if ext.Critical {
				return fmt.Errorf("entry %v: critical extension %v not supported", e.SerialNumber, ext.Id)
			}
		}
	}
	cas := d.bySubject[key]
	if len(cas) == 0 {
		return errors.New("no CA certificate of its issuer in the directory")
	}
	for _, ca := range cas {
		c := ca.cert
		if c.KeyUsage != 0 && c.KeyUsage&x509.KeyUsageCRLSign == 0 {
			continue
		}
		// CRLs are the CA's own words, not a client's: SHA-1 signatures,
		// still common on long-lived CAs' CRLs, are accepted.
		if c.CheckSignature(crl.SignatureAlgorithm, crl.RawTBSRevocationList, crl.Signature) == nil {
			return nil
		}
	}
	return errors.New("its signature does not verify with the key of a CA of that name allowed to sign CRLs")
}

// checkRevocation applies the CRL policy to cert, issued by ca. A CRL
// past its next update under a lenient policy yields a warning.
func (v *Verifier) checkRevocation(cert *x509.Certificate, ca *caCert, at time.Time) (warning string, err error) {
	mode := v.cfg.CRL
	if mode == CRLIgnore {
		return "", nil
	}
	set := v.cas.crls[ca.key]
	switch {
	case set != nil && set.unusable != "":
		// Even if another file of the CA verified: refuse, as xrootd
		// refuses an invalid CRL, rather than guess which is right.
		return "", reason(ErrCRL, "a CRL of %s is not usable (%s)", ca.subject, set.unusable)
	case set == nil && mode == CRLTry:
		return "", nil
	case set == nil:
		return "", reason(ErrCRL, "%s has no CRL in the CA directory (crl = %v)", ca.subject, mode)
	}
	if e, ok := set.revoked[cert.SerialNumber.String()]; ok {
		return "", fmt.Errorf("%w: serial %s revoked at %s (%s) by the CRL of %s", ErrRevoked,
			serialHex(cert.SerialNumber), e.RevocationTime.UTC().Format(time.RFC3339), revocationReason(e.ReasonCode), ca.subject)
	}
	if stale := v.crlStale(set, at); stale != "" {
		if mode == CRLRequire {
			return "", reason(ErrCRL, "%s (crl = require)", stale)
		}
		return stale, nil
	}
	return "", nil
}

// crlStale says why a CA's CRL is out of date at at, or "".
func (v *Verifier) crlStale(set *crlSet, at time.Time) string {
	switch {
	case !set.nextUpdate.IsZero() && at.After(set.nextUpdate.Add(v.cfg.ClockSkew)):
		return fmt.Sprintf("the CRL of %s expired at %s", set.caSubject, set.nextUpdate.UTC().Format(time.RFC3339))
	case at.Before(set.thisUpdate.Add(-v.cfg.ClockSkew)):
		return fmt.Sprintf("the CRL of %s is dated %s, in the future", set.caSubject, set.thisUpdate.UTC().Format(time.RFC3339))
	}
	return ""
}

func serialHex(n *big.Int) string { return fmt.Sprintf("0x%X", n) }

// revocationReason names an RFC 5280 CRLReason code.
func revocationReason(code int) string {
	switch code {
	case 0:
		return "unspecified"
	case 1:
		return "keyCompromise"
	case 2:
		return "cACompromise"
	case 3:
		return "affiliationChanged"
	case 4:
		return "superseded"
	case 5:
		return "cessationOfOperation"
	case 6:
		return "certificateHold"
	case 8:
		return "removeFromCRL"
	case 9:
		return "privilegeWithdrawn"
	case 10:
		return "aACompromise"
	}
	return fmt.Sprintf("reason %d", code)
}
