package x509grid

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// An attribute certificate as RFC 5755 defines it and VOMS writes it:
//
//	AttributeCertificate ::= SEQUENCE {
//	    acinfo AttributeCertificateInfo,
//	    signatureAlgorithm AlgorithmIdentifier,
//	    signatureValue BIT STRING }
//	AttributeCertificateInfo ::= SEQUENCE {
//	    version INTEGER (v2 = 1),
//	    holder Holder,
//	    issuer [0] V2Form,
//	    signature AlgorithmIdentifier,
//	    serialNumber INTEGER,
//	    attrCertValidityPeriod SEQUENCE { GeneralizedTime, GeneralizedTime },
//	    attributes SEQUENCE OF Attribute,
//	    issuerUniqueID BIT STRING OPTIONAL,
//	    extensions Extensions OPTIONAL }
type attributeCertificate struct {
	rawInfo   []byte // the signed bytes
	sigAlg    pkix.AlgorithmIdentifier
	signature []byte

	innerSigAlg pkix.AlgorithmIdentifier
	serial      *big.Int
	holder      acHolder
	issuer      []byte // raw Name of the VOMS server
	notBefore   time.Time
	notAfter    time.Time
	attributes  []acAttribute
	extensions  []pkix.Extension
}

// acHolder names the user an AC was issued to: by the user
// certificate's serial and a name (VOMS writes the certificate's issuer,
// voms-proxy-fake its subject), and optionally also by the user's name.
type acHolder struct {
	serial     *big.Int
	serialName []byte // raw Name of baseCertificateID
	hasUID     bool
	entityName []byte // raw Name of entityName, nil when absent
}

type acAttribute struct {
	Type   asn1.ObjectIdentifier
	Values []asn1.RawValue `asn1:"set"`
}

var errAC = errors.New("invalid attribute certificate")

func acErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errAC, fmt.Sprintf(format, args...))
}

// parseAC reads one DER attribute certificate.
func parseAC(der []byte) (*attributeCertificate, error) {
	var outer struct {
		Info      asn1.RawValue
		SigAlg    pkix.AlgorithmIdentifier
		Signature asn1.BitString
	}
	if rest, err := asn1.Unmarshal(der, &outer); err != nil || len(rest) != 0 {
		return nil, acErr("not an AttributeCertificate")
	}
	var info struct {
		Version    int
		Holder     asn1.RawValue
		Issuer     asn1.RawValue
		SigAlg     pkix.AlgorithmIdentifier
		Serial     *big.Int
		Validity   acValidity
		Attributes []acAttribute
		IssuerUID  asn1.BitString   `asn1:"optional"`
		Extensions []pkix.Extension `asn1:"optional"`
	}
	if rest, err := asn1.Unmarshal(outer.Info.FullBytes, &info); err != nil || len(rest) != 0 {
		return nil, acErr("AttributeCertificateInfo: %v", err)
	}
	if info.Version != 1 {
		return nil, acErr("version %d, not v2", info.Version+1)
	}
	ac := &attributeCertificate{
		rawInfo: outer.Info.FullBytes, sigAlg: outer.SigAlg, signature: outer.Signature.RightAlign(),
		innerSigAlg: info.SigAlg, serial: info.Serial,
		notBefore: info.Validity.NotBefore, notAfter: info.Validity.NotAfter,
		attributes: info.Attributes, extensions: info.Extensions,
	}
	var err error
	if ac.holder, err = parseHolder(info.Holder); err != nil {
		return nil, err
	}
	if ac.issuer, err = parseV2Form(info.Issuer); err != nil {
		return nil, err
	}
	return ac, nil
}

type acValidity struct {
	NotBefore time.Time `asn1:"generalized"`
	NotAfter  time.Time `asn1:"generalized"`
}

// parseHolder reads Holder ::= SEQUENCE { baseCertificateID [0]
// IssuerSerial OPTIONAL, entityName [1] GeneralNames OPTIONAL,
// objectDigestInfo [2] OPTIONAL }, tags implicit.
func parseHolder(raw asn1.RawValue) (acHolder, error) {
	var h acHolder
	if raw.Class != asn1.ClassUniversal || raw.Tag != asn1.TagSequence {
		return h, acErr("holder is not a SEQUENCE")
	}
	elems, err := rawElements(raw.Bytes, 3)
	if err != nil {
		return h, acErr("holder: %v", err)
	}
	for _, e := range elems {
		if e.Class != asn1.ClassContextSpecific || !e.IsCompound {
			return h, acErr("holder: unexpected element")
		}
		switch e.Tag {
		case 0:
			if h.serialName, h.serial, h.hasUID, err = parseIssuerSerial(e.Bytes); err != nil {
				return h, err
			}
		case 1:
			if h.entityName, err = singleDirectoryName(e.Bytes); err != nil {
				return h, acErr("holder entityName: %v", err)
			}
		default:
			return h, acErr("holder by object digest is not supported")
		}
	}
	// A name alone would let any certificate of that name, from any CA,
	// use the AC; VOMS always writes (and reads only) baseCertificateID.
	if h.serial == nil {
		return h, acErr("holder names no certificate (baseCertificateID)")
	}
	return h, nil
}

// parseIssuerSerial reads the contents of IssuerSerial ::= SEQUENCE {
// issuer GeneralNames, serial INTEGER, issuerUID BIT STRING OPTIONAL }.
func parseIssuerSerial(b []byte) ([]byte, *big.Int, bool, error) {
	elems, err := rawElements(b, 3)
	if err != nil || len(elems) < 2 {
		return nil, nil, false, acErr("holder baseCertificateID")
	}
	if elems[0].Tag != asn1.TagSequence || elems[0].Class != asn1.ClassUniversal {
		return nil, nil, false, acErr("holder baseCertificateID issuer")
	}
	n, err := singleDirectoryName(elems[0].Bytes)
	if err != nil {
		return nil, nil, false, acErr("holder baseCertificateID issuer: %v", err)
	}
	serial := new(big.Int)
	if rest, err := asn1.Unmarshal(elems[1].FullBytes, &serial); err != nil || len(rest) != 0 {
		return nil, nil, false, acErr("holder baseCertificateID serial")
	}
	return n, serial, len(elems) == 3, nil
}

// parseV2Form reads the AC issuer, [0] V2Form with issuerName alone
// (RFC 5755 4.2.3), and returns that name.
func parseV2Form(raw asn1.RawValue) ([]byte, error) {
	if raw.Class != asn1.ClassContextSpecific || raw.Tag != 0 || !raw.IsCompound {
		return nil, acErr("issuer is not a V2Form")
	}
	elems, err := rawElements(raw.Bytes, 3)
	if err != nil || len(elems) != 1 || elems[0].Class != asn1.ClassUniversal || elems[0].Tag != asn1.TagSequence {
		return nil, acErr("issuer is not a V2Form naming the issuer alone")
	}
	n, err := singleDirectoryName(elems[0].Bytes)
	if err != nil {
		return nil, acErr("issuer: %v", err)
	}
	return n, nil
}

// singleDirectoryName reads the contents of GeneralNames holding one
// directoryName ([4] EXPLICIT Name) and returns the Name's DER.
func singleDirectoryName(b []byte) ([]byte, error) {
	names, err := rawElements(b, 1)
	if err != nil || len(names) != 1 {
		return nil, errors.New("not one general name")
	}
	gn := names[0]
	if gn.Class != asn1.ClassContextSpecific || gn.Tag != 4 || !gn.IsCompound {
		return nil, errors.New("not a directory name")
	}
	var name asn1.RawValue
	if rest, err := asn1.Unmarshal(gn.Bytes, &name); err != nil || len(rest) != 0 {
		return nil, errors.New("unreadable directory name")
	}
	if _, err := parseName(name.FullBytes); err != nil {
		return nil, err
	}
	return name.FullBytes, nil
}

// rawElements splits DER contents into at most max elements.
func rawElements(b []byte, max int) ([]asn1.RawValue, error) {
	var out []asn1.RawValue
	for len(b) > 0 {
		if len(out) == max {
			return nil, fmt.Errorf("more than %d elements", max)
		}
		var e asn1.RawValue
		rest, err := asn1.Unmarshal(b, &e)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		b = rest
	}
	return out, nil
}

// extension returns the AC's extension with the OID, if any.
func (ac *attributeCertificate) extension(oid string) (pkix.Extension, bool) {
	for _, e := range ac.extensions {
		if e.Id.String() == oid {
			return e, true
		}
	}
	return pkix.Extension{}, false
}
