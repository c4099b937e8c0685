package x509grid

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"time"
)

// oidVOMSACs is the proxy extension holding the VOMS attribute
// certificates: a SEQUENCE holding a SEQUENCE OF AttributeCertificate.
const oidVOMSACs = "1.3.6.1.4.1.8005.100.100.5"

// addVOMS checks the attribute certificates of a verified chain. As
// VOMS does, it reads them from the certificate nearest the leaf that
// carries the extension (a proxy of a VOMS proxy carries none, and its
// issuer's count). Each AC stands alone: the refused ones are listed
// with their reasons and their VOs left out.
func (v *Verifier) addVOMS(res *Result, presented []*link, at time.Time) {
	var ext []byte
	for _, l := range presented {
		for _, e := range l.cert.Extensions {
			if e.Id.String() == oidVOMSACs {
				ext = e.Value
				break
			}
		}
		if ext != nil {
			break
		}
	}
	if ext == nil {
		return
	}
	acs, err := splitACs(ext, v.lim.MaxACs)
	if err != nil {
		res.RejectedACs = append(res.RejectedACs, &ACError{Err: err})
		return
	}
	eec := presented[len(presented)-1].cert
	seen := map[string]bool{}
	for i, der := range acs {
		vo, warnings, err := v.verifyAC(der, eec, at)
		if err == nil && seen[vo.Name] {
			err = fmt.Errorf("a second attribute certificate of VO %s", vo.Name)
		}
		if err != nil {
			res.RejectedACs = append(res.RejectedACs, &ACError{Index: i, VO: vo.Name, Issuer: vo.Server, Err: err})
			continue
		}
		seen[vo.Name] = true
		res.VOs = append(res.VOs, vo)
		res.Warnings = append(res.Warnings, warnings...)
		res.Expires = earliest(res.Expires, vo.NotAfter)
	}
}

// splitACs reads the VOMS extension into at most max DER ACs.
func splitACs(ext []byte, max int) ([][]byte, error) {
	var seq struct{ ACs []asn1.RawValue }
	if rest, err := asn1.Unmarshal(ext, &seq); err != nil || len(rest) != 0 {
		return nil, acErr("unreadable VOMS extension")
	}
	if len(seq.ACs) > max {
		return nil, acErr("%d attribute certificates (limit %d)", len(seq.ACs), max)
	}
	out := make([][]byte, len(seq.ACs))
	for i, ac := range seq.ACs {
		out[i] = ac.FullBytes
	}
	return out, nil
}

// verifyAC checks one AC against the end-entity certificate eec. The
// VO it returns names the AC's VO and server even on failure, when the
// AC could be read that far.
func (v *Verifier) verifyAC(der []byte, eec *x509.Certificate, at time.Time) (VO, []string, error) {
	ac, err := parseAC(der)
	if err != nil {
		return VO{}, nil, err
	}
	vo := VO{NotBefore: ac.notBefore, NotAfter: ac.notAfter}
	vo.Server, _ = SlashName(ac.issuer)
	attrs, err := readVOMSAttributes(ac.attributes, v.lim)
	if attrs != nil {
		vo.Name, vo.URI, vo.FQANs = attrs.vo, attrs.uri, attrs.fqans
	}
	if err != nil {
		return vo, nil, err
	}
	if err := v.checkACFields(ac, eec, at); err != nil {
		return vo, nil, err
	}
	signer, err := v.vomsSigner(ac, attrs)
	if err != nil {
		return vo, nil, err
	}
	if !sameName(ac.issuer, signer.RawSubject) {
		return vo, nil, reason(ErrUntrustedVOMS, "the AC's issuer name is not its signer's, %s", certSubject(signer))
	}
	if err := checkAuthorityKeyID(ac, signer); err != nil {
		return vo, nil, err
	}
	warnings, err := v.verifyVOMSServer(signer, at)
	return vo, warnings, err
}

// checkACFields checks what needs no trust decision: the signature
// algorithm, the serial, the validity, the holder, the extensions.
func (v *Verifier) checkACFields(ac *attributeCertificate, eec *x509.Certificate, at time.Time) error {
	if !ac.sigAlg.Algorithm.Equal(ac.innerSigAlg.Algorithm) || !bytes.Equal(ac.sigAlg.Parameters.FullBytes, ac.innerSigAlg.Parameters.FullBytes) {
		return acErr("its two signature algorithms differ")
	}
	if ac.serial.Sign() < 0 || len(ac.serial.Bytes()) > 20 {
		return acErr("serial number longer than 20 bytes")
	}
	if err := v.inValidity(ac.notBefore, ac.notAfter, at); err != nil {
		return err
	}
	if err := checkHolder(ac.holder, eec); err != nil {
		return err
	}
	return checkACExtensions(ac, v.cfg.Hostnames)
}

// checkHolder requires the AC to name the chain's end-entity
// certificate: by its serial and its issuer's name, or its own name as
// voms-proxy-fake writes it (VOMS accepts both), and by its subject if
// the holder also gives a name (entityName).
func checkHolder(h acHolder, eec *x509.Certificate) error {
	if h.hasUID {
		return acErr("holder issuerUID is not supported")
	}
	if h.serial.Cmp(eec.SerialNumber) != 0 {
		return reason(ErrHolder, "the holder is certificate serial %s, the user's is %s", serialHex(h.serial), serialHex(eec.SerialNumber))
	}
	if !sameName(h.serialName, eec.RawIssuer) && !sameName(h.serialName, eec.RawSubject) {
		holder, _ := SlashName(h.serialName)
		return reason(ErrHolder, "the holder's certificate is of %s", holder)
	}
	if h.entityName != nil && !sameName(h.entityName, eec.RawSubject) {
		holder, _ := SlashName(h.entityName)
		return reason(ErrHolder, "the holder is %s", holder)
	}
	return nil
}

// vomsSigner finds the VOMS server certificate that signed the AC and
// that the vomsdir lists for the AC's VO: the certificate the AC embeds
// when <vo>/<host>.lsc matches its chain, else a certificate placed in
// <vo>/. It verifies the AC's signature with it.
func (v *Verifier) vomsSigner(ac *attributeCertificate, attrs *vomsAttributes) (*x509.Certificate, error) {
	if v.voms == nil {
		return nil, reason(ErrUntrustedVOMS, "no vomsdir is configured")
	}
	t := v.voms.vos[attrs.vo]
	if t == nil {
		return nil, reason(ErrUntrustedVOMS, "the vomsdir has no directory for VO %s%s", attrs.vo, v.listedElsewhere(attrs))
	}
	if chains, ok := t.lsc[attrs.host]; ok {
		embedded, err := embeddedCerts(ac, v.lim)
		if err != nil {
			return nil, err
		}
		if embedded != nil {
			if !lscMatches(chains, embedded) {
				return nil, reason(ErrUntrustedVOMS, "its VOMS server certificate %s (issuer %s) does not match %s/%s.lsc",
					certSubject(embedded[0]), certIssuer(embedded[0]), attrs.vo, attrs.host)
			}
			return embedded[0], checkACSignature(ac, embedded[0])
		}
	}
	for _, c := range t.certs {
		if checkACSignature(ac, c) == nil {
			return c, nil
		}
	}
	return nil, reason(ErrUntrustedVOMS, "the vomsdir lists no VOMS server %s (%s) for VO %s%s",
		certName(ac.issuer), attrs.host, attrs.vo, v.listedElsewhere(attrs))
}

// listedElsewhere says which other VO lists the AC's host, to explain a
// refusal.
func (v *Verifier) listedElsewhere(attrs *vomsAttributes) string {
	for name, t := range v.voms.vos {
		if _, ok := t.lsc[attrs.host]; ok && name != attrs.vo {
			return fmt.Sprintf(": %s.lsc is listed for VO %s only", attrs.host, name)
		}
	}
	return ""
}

// lscMatches reports whether one of an .lsc file's chains names the
// embedded certificates, each by subject and issuer, the signer first.
// As in VOMS, the file may list more certificates than are embedded.
func lscMatches(chains []lscChain, embedded []*x509.Certificate) bool {
	for _, chain := range chains {
		if len(chain) < len(embedded) {
			continue
		}
		ok := true
		for i, c := range embedded {
			if normalizeSlashDN(certSubject(c)) != chain[i][0] || normalizeSlashDN(certIssuer(c)) != chain[i][1] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func checkACSignature(ac *attributeCertificate, signer *x509.Certificate) error {
	alg := acSignatureAlgorithm(ac.sigAlg.Algorithm)
	if alg == x509.UnknownSignatureAlgorithm {
		return reason(ErrSignature, "signature algorithm %v is not accepted", ac.sigAlg.Algorithm)
	}
	if err := signer.CheckSignature(alg, ac.rawInfo, ac.signature); err != nil {
		return reason(ErrSignature, "the AC's signature does not verify with the key of %s: %v", certSubject(signer), err)
	}
	return nil
}

// verifyVOMSServer checks the VOMS server's certificate as an
// end-entity certificate of the CA directory.
func (v *Verifier) verifyVOMSServer(c *x509.Certificate, at time.Time) ([]string, error) {
	l, err := newLink(c, 0)
	if err == nil {
		err = checkEndEntity(l, false)
		if err == nil {
			err = v.inValidity(c.NotBefore, c.NotAfter, at)
		}
		if err != nil {
			err = l.fail(err)
		}
	}
	var warnings []string
	if err == nil {
		_, warnings, err = v.caPath(l, at)
	}
	if err != nil {
		return nil, fmt.Errorf("VOMS server certificate: %w", err)
	}
	return warnings, nil
}

func certName(raw []byte) string {
	s, err := SlashName(raw)
	if err != nil {
		return "(unreadable name)"
	}
	return s
}

func certSubject(c *x509.Certificate) string { return certName(c.RawSubject) }
func certIssuer(c *x509.Certificate) string  { return certName(c.RawIssuer) }
