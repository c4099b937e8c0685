package x509grid

import (
	"bytes"
	"crypto/sha1"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"
	"strings"
)

// The extensions of a VOMS attribute certificate.
const (
	oidACTargets      = "2.5.29.55" // idceTargets: the hosts the AC is for
	oidNoRevAvail     = "2.5.29.56" // no revocation information: VOMS ACs are short-lived
	oidAuthorityKeyID = "2.5.29.35"
	oidVOMSCerts      = "1.3.6.1.4.1.8005.100.100.10" // the VOMS server's certificate chain
)

// checkACExtensions requires what VOMS requires (noRevAvail and
// authorityKeyIdentifier present; targets the only critical extension)
// and the targets, when given, to name one of hostnames.
func checkACExtensions(ac *attributeCertificate, hostnames []string) error {
	if _, ok := ac.extension(oidNoRevAvail); !ok {
		return acErr("no noRevAvail extension")
	}
	if _, ok := ac.extension(oidAuthorityKeyID); !ok {
		return acErr("no authorityKeyIdentifier extension")
	}
	for _, e := range ac.extensions {
		if e.Critical && e.Id.String() != oidACTargets {
			return reason(ErrCriticalExtension, "%v in the attribute certificate", e.Id)
		}
	}
	if e, ok := ac.extension(oidACTargets); ok {
		targets, err := parseTargets(e.Value)
		if err != nil {
			return err
		}
		if !targetsMatch(targets, hostnames) {
			return fmt.Errorf("issued for other hosts (targets %q)", targets)
		}
	}
	return nil
}

// parseTargets reads the host names of idceTargets: a SEQUENCE OF
// Targets, each a SEQUENCE OF Target; VOMS wraps each Target's
// [0] targetName in a SEQUENCE of its own, RFC 5755 does not.
func parseTargets(der []byte) ([]string, error) {
	var outer []asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &outer); err != nil || len(rest) != 0 || len(outer) > 32 {
		return nil, acErr("unreadable targets")
	}
	var hosts []string
	for _, group := range outer {
		elems, err := rawElements(group.Bytes, 32)
		if err != nil {
			return nil, acErr("unreadable targets")
		}
		for _, t := range elems {
			if t.Class == asn1.ClassUniversal && t.Tag == asn1.TagSequence {
				inner, err := rawElements(t.Bytes, 3)
				if err != nil || len(inner) == 0 {
					continue
				}
				t = inner[0]
			}
			if t.Class != asn1.ClassContextSpecific || t.Tag != 0 {
				continue // a target group or certificate: matches no host
			}
			var gn asn1.RawValue
			if _, err := asn1.Unmarshal(t.Bytes, &gn); err == nil && gn.Class == asn1.ClassContextSpecific && (gn.Tag == 6 || gn.Tag == 2) {
				hosts = append(hosts, string(gn.Bytes))
			}
		}
	}
	return hosts, nil
}

func targetsMatch(targets, hostnames []string) bool {
	for _, t := range targets {
		for _, h := range hostnames {
			if strings.EqualFold(t, h) {
				return true
			}
		}
	}
	return false
}

// checkAuthorityKeyID compares the AC's authorityKeyIdentifier with the
// signer, as VOMS does: a 20-byte key identifier must be the SHA-1 of
// the signer's public key; without one, the issuer serial must be the
// signer's.
func checkAuthorityKeyID(ac *attributeCertificate, signer *x509.Certificate) error {
	e, _ := ac.extension(oidAuthorityKeyID)
	keyID, serial, err := parseAuthorityKeyID(e.Value)
	if err != nil {
		return err
	}
	if len(keyID) == 20 {
		var spki struct {
			Algorithm asn1.RawValue
			PublicKey asn1.BitString
		}
		if _, err := asn1.Unmarshal(signer.RawSubjectPublicKeyInfo, &spki); err != nil {
			return acErr("unreadable VOMS server key")
		}
		sum := sha1.Sum(spki.PublicKey.Bytes)
		if !bytes.Equal(sum[:], keyID) {
			return reason(ErrUntrustedVOMS, "its authorityKeyIdentifier is not the VOMS server's key")
		}
		return nil
	}
	if len(keyID) == 0 && (serial == nil || serial.Cmp(signer.SerialNumber) != 0) {
		return reason(ErrUntrustedVOMS, "its authorityKeyIdentifier does not name the VOMS server's certificate")
	}
	return nil
}

// parseAuthorityKeyID reads AuthorityKeyIdentifier ::= SEQUENCE {
// keyIdentifier [0] OPTIONAL, authorityCertIssuer [1] OPTIONAL,
// authorityCertSerialNumber [2] OPTIONAL }, tags implicit.
func parseAuthorityKeyID(der []byte) (keyID []byte, serial *big.Int, err error) {
	var seq asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &seq); err != nil || len(rest) != 0 || seq.Tag != asn1.TagSequence {
		return nil, nil, acErr("unreadable authorityKeyIdentifier")
	}
	elems, err := rawElements(seq.Bytes, 3)
	if err != nil {
		return nil, nil, acErr("unreadable authorityKeyIdentifier")
	}
	for _, el := range elems {
		if el.Class != asn1.ClassContextSpecific {
			return nil, nil, acErr("unreadable authorityKeyIdentifier")
		}
		switch el.Tag {
		case 0:
			keyID = el.Bytes
		case 2:
			serial = new(big.Int)
			asInteger := append([]byte{asn1.TagInteger}, el.FullBytes[1:]...)
			if _, err := asn1.Unmarshal(asInteger, &serial); err != nil {
				return nil, nil, acErr("unreadable authorityKeyIdentifier serial")
			}
		}
	}
	return keyID, serial, nil
}

// embeddedCerts reads the VOMS server chain an AC carries: a SEQUENCE
// holding a SEQUENCE OF Certificate, the signer first.
func embeddedCerts(ac *attributeCertificate, lim Limits) ([]*x509.Certificate, error) {
	e, ok := ac.extension(oidVOMSCerts)
	if !ok {
		return nil, nil
	}
	var seq struct{ Certs []asn1.RawValue }
	if rest, err := asn1.Unmarshal(e.Value, &seq); err != nil || len(rest) != 0 {
		return nil, acErr("unreadable VOMS server certificates")
	}
	if len(seq.Certs) == 0 || len(seq.Certs) > lim.MaxACCerts {
		return nil, acErr("%d VOMS server certificates (between 1 and %d expected)", len(seq.Certs), lim.MaxACCerts)
	}
	var certs []*x509.Certificate
	for _, raw := range seq.Certs {
		if len(raw.FullBytes) > lim.MaxCertSize {
			return nil, acErr("a VOMS server certificate of %d bytes", len(raw.FullBytes))
		}
		c, err := x509.ParseCertificate(raw.FullBytes)
		if err != nil {
			return nil, acErr("VOMS server certificate: %v", err)
		}
		certs = append(certs, c)
	}
	return certs, nil
}

// acSignatureAlgorithm maps the AC's signature algorithm to crypto/x509's
// name for it; the weak ones and those with parameters (RSA-PSS) map to
// UnknownSignatureAlgorithm and are refused.
func acSignatureAlgorithm(oid asn1.ObjectIdentifier) x509.SignatureAlgorithm {
	switch oid.String() {
	case "1.2.840.113549.1.1.11":
		return x509.SHA256WithRSA
	case "1.2.840.113549.1.1.12":
		return x509.SHA384WithRSA
	case "1.2.840.113549.1.1.13":
		return x509.SHA512WithRSA
	case "1.2.840.10045.4.3.2":
		return x509.ECDSAWithSHA256
	case "1.2.840.10045.4.3.3":
		return x509.ECDSAWithSHA384
	case "1.2.840.10045.4.3.4":
		return x509.ECDSAWithSHA512
	case "1.3.101.112":
		return x509.PureEd25519
	}
	return x509.UnknownSignatureAlgorithm
}
