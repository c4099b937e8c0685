package x509grid

import (
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"
)

const elsewhereDN = "/DC=org/DC=elsewhere/CN=Elsewhere Root CA"

// refusedACs are ACs whose VOMS server the vomsdir does not list for
// their VO.
func refusedACs() []acCase {
	return []acCase{
		{name: "VOMS server listed for another VO",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, fx.VOMS2, fx.CADir, testVO, voms2Host, []string{testFQAN}).Chain
			},
			want: ErrUntrustedVOMS, wantText: "voms2.example.org.lsc is listed for VO othervo only"},
		{name: "VO not in the vomsdir",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, fx.VOMS, fx.CADir, "unknownvo", vomsHost, []string{"/unknownvo"}).Chain
			},
			want: ErrUntrustedVOMS, wantText: "the vomsdir has no directory for VO unknownvo"},
		{name: ".lsc naming another VOMS server",
			make: func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Alice).Chain },
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.Path("vomsdir")
				b.LSC(dir, testVO, vomsHost, voms2DN, rootDN)
				return dir
			},
			want: ErrUntrustedVOMS, wantText: "does not match testvo/voms.example.org.lsc"},
		{name: "VOMS server certificate at the top of the vomsdir",
			make: func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Alice).Chain },
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.Path("vomsdir")
				b.LSC(dir, otherVO, voms2Host, voms2DN, rootDN)
				b.Mkdir(dir + "/" + testVO)
				b.CopyTo(fx.VOMS.Cert, dir+"/voms.pem")
				return dir
			},
			want: ErrUntrustedVOMS, wantText: "the vomsdir lists no VOMS server",
			differs: "VOMS trusts a certificate at the vomsdir's top for every VO; here a VOMS server counts only for the VOs whose directories list it"},
	}
}

// invalidACs are ACs of a listed VOMS server, refused for what they say.
func invalidACs() []acCase {
	return []acCase{
		{name: "broken AC signature",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				// Signed with another key than its VOMS server certificate's.
				forged := cred{Cert: fx.VOMS.Cert, Key: fx.VOMS2.Key}
				return b.VOMSProxy(fx.Alice, forged, fx.CADir, testVO, vomsHost, []string{testFQAN}).Chain
			},
			want: ErrSignature, wantText: "does not verify with the key of " + vomsDN},
		{name: "AC of another user",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				alice, bob := vomsProxyOf(fx, b, fx.Alice), vomsProxyOf(fx, b, fx.Bob)
				b.OK(t)
				return withVOMSExtension(t, b, alice.Chain, fx.Alice, vomsExtension(t, bob.Chain))
			},
			want: ErrHolder, wantText: "the holder is certificate serial"},
		{name: "AC of another user by name",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.Alice)
				b.OK(t)
				alice, bob := loadCerts(t, fx.Alice.Cert)[0], loadCerts(t, fx.Bob.Cert)[0]
				ext := resignedAC(t, vomsExtension(t, p.Chain), fx.VOMS.Key, func(a *acParts) {
					a.Holder = holderIssuerSerial(t, bob.RawSubject, alice.SerialNumber)
				})
				return withVOMSExtension(t, b, p.Chain, fx.Alice, ext)
			},
			want: ErrHolder, wantText: "the holder's certificate is of " + bobDN},
		{name: "holder named by the user's name alone",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.Alice)
				b.OK(t)
				user := loadCerts(t, fx.Alice.Cert)[0]
				ext := resignedAC(t, vomsExtension(t, p.Chain), fx.VOMS.Key, func(a *acParts) {
					a.Holder = holderEntityName(t, user.RawSubject)
				})
				return withVOMSExtension(t, b, p.Chain, fx.Alice, ext)
			},
			want: errAC, wantText: "holder names no certificate"},
	}
}

// badFieldACs are ACs refused for their validity, extensions or FQANs.
func badFieldACs() []acCase {
	return []acCase{
		{name: "expired AC",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, fx.VOMS, fx.CADir, testVO, vomsHost, []string{testFQAN}, "-vomslife", "1", "-pastac", "2:00").Chain
			},
			want: ErrExpired, wantText: "expired at"},
		{name: "AC not yet valid",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return editedAC(t, fx, b, func(a *acParts) {
					a.Validity = validity(t, time.Now().Add(time.Hour), time.Now().Add(12*time.Hour))
				})
			},
			want: ErrNotYetValid, wantText: "valid from"},
		{name: "AC for other hosts",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return editedAC(t, fx, b, func(a *acParts) {
					a.Extensions = append(a.Extensions, targetsExtension(t, "other.example.org"))
				})
			},
			config:   func(c *Config) { c.Hostnames = []string{"box.example.org"} },
			wantText: `issued for other hosts (targets ["other.example.org"])`, want: ErrVOMS},
		{name: "AC with an unknown critical extension",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return editedAC(t, fx, b, func(a *acParts) {
					a.Extensions = append(a.Extensions, pkix.Extension{Id: asn1.ObjectIdentifier{1, 2, 3, 4, 5}, Critical: true, Value: []byte{5, 0}})
				})
			},
			want: ErrCriticalExtension, wantText: "1.2.3.4.5 in the attribute certificate"},
		{name: "AC without noRevAvail",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return editedAC(t, fx, b, func(a *acParts) {
					var kept []pkix.Extension
					for _, e := range a.Extensions {
						if e.Id.String() != oidNoRevAvail {
							kept = append(kept, e)
						}
					}
					a.Extensions = kept
				})
			},
			want: errAC, wantText: "no noRevAvail extension"},
		{name: "FQAN of another VO",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, fx.VOMS, fx.CADir, testVO, vomsHost, []string{testFQAN, otherFQAN}).Chain
			},
			want: errAC, wantText: `FQAN "/othervo/Role=NULL/Capability=NULL" is not of VO testvo`},
	}
}

// badServerACs are ACs refused for their VOMS server certificate, and
// the ACs of a box without vomsdir.
func badServerACs() []acCase {
	return []acCase{
		{name: "VOMS server certificate of an unknown CA",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				// An RSA CA: voms-proxy-fake signs an AC with the digest of
				// its server certificate's signature, SHA-1 for ECDSA ones.
				elsewhere := b.NewRootCA("elsewhere", elsewhereDN, false)
				server := b.Issue(elsewhere, "voms-other", "/DC=org/DC=elsewhere/CN=voms.example.org", "v3_host")
				return b.VOMSProxy(fx.Alice, server, fx.CADir, testVO, vomsHost, []string{testFQAN}).Chain
			},
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.Path("vomsdir")
				b.LSC(dir, testVO, vomsHost, "/DC=org/DC=elsewhere/CN=voms.example.org", elsewhereDN)
				return dir
			},
			want: ErrUnknownCA, wantText: "VOMS server certificate: certificate 0"},
		{name: "revoked VOMS server certificate",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.VOMSProxy(fx.Alice, revokedVOMSServer(fx, b), fx.CADir, testVO, vomsHost, []string{testFQAN}).Chain
			},
			caDir: func(fx *fixture, b *builder) string {
				dir := b.Path("certificates")
				fx.installCADir(dir, b.CRL(fx.Root), b.CRL(fx.Inter))
				return dir
			},
			want: ErrRevoked, wantText: "VOMS server certificate: certificate 0 (" + vomsDN + "): revoked"},
		{name: "one good AC, one broken",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				good := vomsProxyOf(fx, b, fx.Alice)
				forged := cred{Cert: fx.VOMS2.Cert, Key: fx.VOMS.Key}
				bad := b.VOMSProxy(fx.Alice, forged, fx.CADir, otherVO, voms2Host, []string{otherFQAN})
				b.OK(t)
				return withVOMSExtension(t, b, good.Chain, fx.Alice, wrapACs(t, firstAC(t, good.Chain), firstAC(t, bad.Chain)))
			},
			wantVOs: []string{testVO}, want: ErrSignature, wantText: "VOMS attribute certificate 1 of VO othervo",
			differs: "libvomsapi drops every AC when one fails; here each AC stands alone"},
		{name: "no vomsdir configured",
			make:   func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.Alice).Chain },
			config: func(c *Config) { c.VOMSDir = "" },
			want:   ErrUntrustedVOMS, wantText: "no vomsdir is configured",
			noPeer: "libvomsapi has no such setting"},
	}
}

// editedAC is Alice's VOMS proxy with its AC edited and re-signed by the
// VOMS server, and the proxy re-signed by Alice.
func editedAC(t *testing.T, fx *fixture, b *builder, edit func(*acParts)) string {
	t.Helper()
	p := vomsProxyOf(fx, b, fx.Alice)
	b.OK(t)
	ext := resignedAC(t, vomsExtension(t, p.Chain), fx.VOMS.Key, edit)
	return withVOMSExtension(t, b, p.Chain, fx.Alice, ext)
}

// revokedVOMSServer is a VOMS server certificate of the fixture's name,
// revoked by the root CA.
func revokedVOMSServer(fx *fixture, b *builder) cred {
	server := b.Issue(fx.Root, "voms-revoked", vomsDN, "v3_host")
	b.Revoke(fx.Root, server, "superseded")
	return server
}

// holderIssuerSerial is a Holder naming a certificate by a name and a
// serial (baseCertificateID).
func holderIssuerSerial(t *testing.T, name []byte, serial *big.Int) asn1.RawValue {
	t.Helper()
	names, err := asn1.Marshal([]asn1.RawValue{{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: name}})
	if err != nil {
		t.Fatal(err)
	}
	ser, err := asn1.Marshal(serial)
	if err != nil {
		t.Fatal(err)
	}
	base, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: append(names, ser...)})
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: base}
}

// holderEntityName is a Holder naming the user by name (entityName).
func holderEntityName(t *testing.T, name []byte) asn1.RawValue {
	t.Helper()
	gn, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: name})
	if err != nil {
		t.Fatal(err)
	}
	entity, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, IsCompound: true, Bytes: gn})
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: entity}
}

func validity(t *testing.T, from, to time.Time) asn1.RawValue {
	t.Helper()
	der, err := asn1.Marshal(acValidity{NotBefore: from.UTC().Truncate(time.Second), NotAfter: to.UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	return asn1.RawValue{FullBytes: der}
}
