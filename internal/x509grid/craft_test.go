package x509grid

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"math/big"
	"os"
	"testing"
)

// Some refusals need a credential no tool makes: an AC of one user in
// another user's proxy, an AC edited and re-signed by its VOMS server.
// These helpers take credentials the tools made and change one thing,
// re-signing with the real keys, so only that thing is wrong.

func loadKey(t testing.TB, path string) crypto.Signer {
	t.Helper()
	data := readPEM(t, path)
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			t.Fatalf("%s: no private key", path)
		}
		if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
			return k.(crypto.Signer)
		}
		if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
			return k
		}
	}
}

func loadCerts(t testing.TB, path string) []*x509.Certificate {
	t.Helper()
	certs, err := parseCertsPEM(readPEM(t, path), 20, 1<<20)
	if err != nil || len(certs) == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	return certs
}

// vomsExtension returns the VOMS extension of a proxy file's first
// certificate.
func vomsExtension(t testing.TB, proxyFile string) []byte {
	t.Helper()
	for _, e := range loadCerts(t, proxyFile)[0].Extensions {
		if e.Id.String() == oidVOMSACs {
			return e.Value
		}
	}
	t.Fatalf("%s has no VOMS extension", proxyFile)
	return nil
}

// withVOMSExtension rewrites a VOMS proxy file's proxy with another VOMS
// extension value, re-signed by the proxy's issuer (the user). It
// writes a new proxy file: the proxy, its key, the user's certificate.
func withVOMSExtension(t *testing.T, b *builder, proxyFile string, user cred, ext []byte) string {
	t.Helper()
	proxy := loadCerts(t, proxyFile)[0]
	tmpl := *proxy
	tmpl.ExtraExtensions = nil
	for _, e := range proxy.Extensions {
		if e.Id.String() == oidVOMSACs {
			e.Value = ext
		}
		tmpl.ExtraExtensions = append(tmpl.ExtraExtensions, e)
	}
	userCert := loadCerts(t, user.Cert)[0]
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, userCert, proxy.PublicKey, loadKey(t, user.Key))
	if err != nil {
		t.Fatal(err)
	}
	out := b.Path(b.Unique("grafted") + ".pem")
	keyPEM := pemBlocks(t, proxyFile, "PRIVATE KEY", "RSA PRIVATE KEY")
	data := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM...)
	data = append(data, readPEM(t, user.Cert)...)
	if err := os.WriteFile(out, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

func pemBlocks(t *testing.T, path string, types ...string) []byte {
	t.Helper()
	var out []byte
	data := readPEM(t, path)
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return out
		}
		for _, ty := range types {
			if b.Type == ty {
				out = append(out, pem.EncodeToMemory(b)...)
			}
		}
	}
}

// acParts is an AttributeCertificateInfo with the parts the tests edit
// decoded and the rest kept as encoded.
type acParts struct {
	Version    int
	Holder     asn1.RawValue
	Issuer     asn1.RawValue
	SigAlg     pkix.AlgorithmIdentifier
	Serial     *big.Int
	Validity   asn1.RawValue
	Attributes asn1.RawValue
	Extensions []pkix.Extension `asn1:"optional"`
}

// resignedAC decodes the first AC of a VOMS extension, lets edit change
// it, and signs it again with the VOMS server's (RSA) key, returning a
// new VOMS extension value holding it.
func resignedAC(t *testing.T, ext []byte, vomsKey string, edit func(*acParts)) []byte {
	t.Helper()
	acs, err := splitACs(ext, 8)
	if err != nil || len(acs) == 0 {
		t.Fatalf("VOMS extension: %v", err)
	}
	var outer struct {
		Info      asn1.RawValue
		SigAlg    pkix.AlgorithmIdentifier
		Signature asn1.BitString
	}
	if _, err := asn1.Unmarshal(acs[0], &outer); err != nil {
		t.Fatal(err)
	}
	var parts acParts
	if _, err := asn1.Unmarshal(outer.Info.FullBytes, &parts); err != nil {
		t.Fatal(err)
	}
	edit(&parts)
	info, err := asn1.Marshal(parts)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(info)
	sig, err := rsa.SignPKCS1v15(rand.Reader, loadKey(t, vomsKey).(*rsa.PrivateKey), crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	ac, err := asn1.Marshal(struct {
		Info      asn1.RawValue
		SigAlg    pkix.AlgorithmIdentifier
		Signature asn1.BitString
	}{asn1.RawValue{FullBytes: info}, outer.SigAlg, asn1.BitString{Bytes: sig, BitLength: 8 * len(sig)}})
	if err != nil {
		t.Fatal(err)
	}
	return wrapACs(t, ac)
}

// wrapACs makes a VOMS extension value of DER ACs.
func wrapACs(t *testing.T, acs ...[]byte) []byte {
	t.Helper()
	var seq struct{ ACs []asn1.RawValue }
	for _, ac := range acs {
		seq.ACs = append(seq.ACs, asn1.RawValue{FullBytes: ac})
	}
	out, err := asn1.Marshal(seq)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// targetsExtension is an idceTargets extension naming hosts, as VOMS
// encodes it: each Target wrapped in a SEQUENCE of its own (RFC 5755
// has none), which is what libvomsapi parses.
func targetsExtension(t *testing.T, hosts ...string) pkix.Extension {
	t.Helper()
	var targets []asn1.RawValue
	for _, h := range hosts {
		uri, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 6, Bytes: []byte(h)})
		name, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: uri})
		targets = append(targets, asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: name})
	}
	inner, err := asn1.Marshal(targets)
	if err != nil {
		t.Fatal(err)
	}
	value, err := asn1.Marshal([]asn1.RawValue{{FullBytes: inner}})
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 55}, Critical: true, Value: value}
}

// vomsAttributesDER is an AC's attributes: VOMS' one attribute with the
// policy authority uri ("vo://host:port") and the FQANs.
func vomsAttributesDER(t *testing.T, uri string, fqans []string) asn1.RawValue {
	t.Helper()
	gn, _ := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 6, Bytes: []byte(uri)})
	syntax := struct {
		Authority asn1.RawValue
		Values    []asn1.RawValue
	}{Authority: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: gn}}
	for _, f := range fqans {
		syntax.Values = append(syntax.Values, asn1.RawValue{Tag: asn1.TagOctetString, Bytes: []byte(f)})
	}
	s, err := asn1.Marshal(syntax)
	if err != nil {
		t.Fatal(err)
	}
	attr, err := asn1.Marshal(struct {
		Type   asn1.ObjectIdentifier
		Values []asn1.RawValue `asn1:"set"`
	}{asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 8005, 100, 100, 4}, []asn1.RawValue{{FullBytes: s}}})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := asn1.Marshal([]asn1.RawValue{{FullBytes: attr}})
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{FullBytes: seq}
}
