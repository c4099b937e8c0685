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
				return b.vomsProxy(fx.alice, fx.voms2, fx.caDir, testVO, voms2Host, []string{testFQAN}).chain
			},
			want: ErrUntrustedVOMS, wantText: "voms2.example.org.lsc is listed for VO othervo only"},
		{name: "VO not in the vomsdir",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.vomsProxy(fx.alice, fx.voms, fx.caDir, "unknownvo", vomsHost, []string{"/unknownvo"}).chain
			},
			want: ErrUntrustedVOMS, wantText: "the vomsdir has no directory for VO unknownvo"},
		{name: ".lsc naming another VOMS server",
			make: func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.alice).chain },
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.path("vomsdir")
				b.lsc(dir, testVO, vomsHost, voms2DN, rootDN)
				return dir
			},
			want: ErrUntrustedVOMS, wantText: "does not match testvo/voms.example.org.lsc"},
		{name: "VOMS server certificate at the top of the vomsdir",
			make: func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.alice).chain },
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.path("vomsdir")
				b.lsc(dir, otherVO, voms2Host, voms2DN, rootDN)
				b.mkdir(dir + "/" + testVO)
				b.copyTo(fx.voms.cert, dir+"/voms.pem")
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
				forged := cred{cert: fx.voms.cert, key: fx.voms2.key}
				return b.vomsProxy(fx.alice, forged, fx.caDir, testVO, vomsHost, []string{testFQAN}).chain
			},
			want: ErrSignature, wantText: "does not verify with the key of " + vomsDN},
		{name: "AC of another user",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				alice, bob := vomsProxyOf(fx, b, fx.alice), vomsProxyOf(fx, b, fx.bob)
				b.ok(t)
				return withVOMSExtension(t, b, alice.chain, fx.alice, vomsExtension(t, bob.chain))
			},
			want: ErrHolder, wantText: "the holder is certificate serial"},
		{name: "AC of another user by name",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.alice)
				b.ok(t)
				alice, bob := loadCerts(t, fx.alice.cert)[0], loadCerts(t, fx.bob.cert)[0]
				ext := resignedAC(t, vomsExtension(t, p.chain), fx.voms.key, func(a *acParts) {
					a.Holder = holderIssuerSerial(t, bob.RawSubject, alice.SerialNumber)
				})
				return withVOMSExtension(t, b, p.chain, fx.alice, ext)
			},
			want: ErrHolder, wantText: "the holder's certificate is of " + bobDN},
		{name: "holder named by the user's name alone",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				p := vomsProxyOf(fx, b, fx.alice)
				b.ok(t)
				user := loadCerts(t, fx.alice.cert)[0]
				ext := resignedAC(t, vomsExtension(t, p.chain), fx.voms.key, func(a *acParts) {
					a.Holder = holderEntityName(t, user.RawSubject)
				})
				return withVOMSExtension(t, b, p.chain, fx.alice, ext)
			},
			want: errAC, wantText: "holder names no certificate"},
	}
}

// badFieldACs are ACs refused for their validity, extensions or FQANs.
func badFieldACs() []acCase {
	return []acCase{
		{name: "expired AC",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.vomsProxy(fx.alice, fx.voms, fx.caDir, testVO, vomsHost, []string{testFQAN}, "-vomslife", "1", "-pastac", "2:00").chain
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
				return b.vomsProxy(fx.alice, fx.voms, fx.caDir, testVO, vomsHost, []string{testFQAN, otherFQAN}).chain
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
				elsewhere := b.newRootCA("elsewhere", elsewhereDN, false)
				server := b.issue(elsewhere, "voms-other", "/DC=org/DC=elsewhere/CN=voms.example.org", "v3_host")
				return b.vomsProxy(fx.alice, server, fx.caDir, testVO, vomsHost, []string{testFQAN}).chain
			},
			vomsDir: func(fx *fixture, b *builder) string {
				dir := b.path("vomsdir")
				b.lsc(dir, testVO, vomsHost, "/DC=org/DC=elsewhere/CN=voms.example.org", elsewhereDN)
				return dir
			},
			want: ErrUnknownCA, wantText: "VOMS server certificate: certificate 0"},
		{name: "revoked VOMS server certificate",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				return b.vomsProxy(fx.alice, revokedVOMSServer(fx, b), fx.caDir, testVO, vomsHost, []string{testFQAN}).chain
			},
			caDir: func(fx *fixture, b *builder) string {
				dir := b.path("certificates")
				fx.installCADir(dir, b.crl(fx.root), b.crl(fx.inter))
				return dir
			},
			want: ErrRevoked, wantText: "VOMS server certificate: certificate 0 (" + vomsDN + "): revoked"},
		{name: "one good AC, one broken",
			make: func(t *testing.T, fx *fixture, b *builder) string {
				good := vomsProxyOf(fx, b, fx.alice)
				forged := cred{cert: fx.voms2.cert, key: fx.voms.key}
				bad := b.vomsProxy(fx.alice, forged, fx.caDir, otherVO, voms2Host, []string{otherFQAN})
				b.ok(t)
				return withVOMSExtension(t, b, good.chain, fx.alice, wrapACs(t, firstAC(t, good.chain), firstAC(t, bad.chain)))
			},
			wantVOs: []string{testVO}, want: ErrSignature, wantText: "VOMS attribute certificate 1 of VO othervo",
			differs: "libvomsapi drops every AC when one fails; here each AC stands alone"},
		{name: "no vomsdir configured",
			make:   func(t *testing.T, fx *fixture, b *builder) string { return vomsProxyOf(fx, b, fx.alice).chain },
			config: func(c *Config) { c.VOMSDir = "" },
			want:   ErrUntrustedVOMS, wantText: "no vomsdir is configured",
			noPeer: "libvomsapi has no such setting"},
	}
}

// editedAC is Alice's VOMS proxy with its AC edited and re-signed by the
// VOMS server, and the proxy re-signed by Alice.
func editedAC(t *testing.T, fx *fixture, b *builder, edit func(*acParts)) string {
	t.Helper()
	p := vomsProxyOf(fx, b, fx.alice)
	b.ok(t)
	ext := resignedAC(t, vomsExtension(t, p.chain), fx.voms.key, edit)
	return withVOMSExtension(t, b, p.chain, fx.alice, ext)
}

// revokedVOMSServer is a VOMS server certificate of the fixture's name,
// revoked by the root CA.
func revokedVOMSServer(fx *fixture, b *builder) cred {
	server := b.issue(fx.root, "voms-revoked", vomsDN, "v3_host")
	b.revoke(fx.root, server, "superseded")
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
