package x509grid

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"testing"
	"time"
)

// The parsers read what unauthenticated clients send. These targets run
// as tests on their seeds; `go test -fuzz=FuzzX` explores further. None
// may panic, and the limits keep each run short.

func FuzzParseName(f *testing.F) {
	for _, n := range []pkix.Name{
		{CommonName: "Alice", Organization: []string{"Example"}, Country: []string{"CH"}},
		{ExtraNames: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, Value: "org"}}},
	} {
		der, _ := asn1.Marshal(n.ToRDNSequence())
		f.Add(der)
	}
	f.Add([]byte{0x30, 0x00})
	f.Fuzz(func(t *testing.T, der []byte) {
		n, err := parseName(der)
		if err != nil {
			return
		}
		c, err := n.canonical()
		if err == nil && len(n) > 0 && len(c) == 0 {
			t.Error("a non-empty name with an empty canonical encoding")
		}
		_ = n.slash()
		n.lastIsSingleCN()
		if _, err := SubjectHash(der); err != nil && c != nil {
			t.Errorf("canonical but no hash: %v", err)
		}
	})
}

func FuzzProxyCertInfo(f *testing.F) {
	f.Add([]byte("\x30\x0f\x02\x01\x01\x30\x0a\x06\x08\x2b\x06\x01\x05\x05\x07\x15\x01"))
	f.Add([]byte("\x30\x0c\x30\x0a\x06\x08\x2b\x06\x01\x05\x05\x07\x15\x01"))
	f.Fuzz(func(t *testing.T, der []byte) {
		info, err := parseProxyCertInfo(der)
		if err == nil && info.pathLen < -1 {
			t.Errorf("path length %d", info.pathLen)
		}
	})
}

func FuzzParseAC(f *testing.F) {
	addFixtureACs(f)
	lim := Limits{}.withDefaults()
	holder := &x509.Certificate{SerialNumber: big.NewInt(1), RawSubject: []byte{0x30, 0}, RawIssuer: []byte{0x30, 0}}
	f.Fuzz(func(t *testing.T, der []byte) {
		ac, err := parseAC(der)
		if err != nil {
			return
		}
		readVOMSAttributes(ac.attributes, lim)
		checkACExtensions(ac, []string{"box.example.org"})
		embeddedCerts(ac, lim)
		checkHolder(ac.holder, holder)
		if e, ok := ac.extension(oidAuthorityKeyID); ok {
			parseAuthorityKeyID(e.Value)
		}
	})
}

// FuzzVOMSExtension verifies a fuzzed VOMS extension for the fixture's
// Alice against its vomsdir: everything up to and with the signature.
func FuzzVOMSExtension(f *testing.F) {
	fx := sharedFixture(f)
	v, alice := fuzzVerifier(f, fx), loadCerts(f, fx.Alice.Cert)[0]
	eec, err := newLink(alice, 0)
	if err != nil {
		f.Fatal(err)
	}
	verify := func(ext []byte) *Result {
		alice := *alice
		alice.Extensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 8005, 100, 100, 5}, Value: ext}}
		l := *eec
		l.cert = &alice
		res := &Result{}
		v.addVOMS(res, []*link{&l}, time.Now())
		return res
	}
	// The seed must pass, or the fuzzer explores only refusals.
	if res := verify(addFixtureVOMSExtension(f, fx)); len(res.VOs) != 1 {
		f.Fatalf("the seed is refused: %v", res.RejectedACs)
	}
	f.Fuzz(func(t *testing.T, ext []byte) { verify(ext) })
}

// FuzzVerifyDER verifies a fuzzed leaf above the fixture's Alice.
func FuzzVerifyDER(f *testing.F) {
	fx := sharedFixture(f)
	v, alice := fuzzVerifier(f, fx), loadCerts(f, fx.Alice.Cert)[0]
	b := fx.scratch(f)
	p := vomsProxyOf(fx, b, fx.Alice)
	if b.Err() != nil {
		f.Fatal(b.Err())
	}
	f.Add(loadCerts(f, p.Chain)[0].Raw)
	f.Add(alice.Raw)
	f.Fuzz(func(t *testing.T, leaf []byte) {
		v.VerifyDER([][]byte{leaf, alice.Raw}, time.Now())
	})
}

func FuzzVerifyPEM(f *testing.F) {
	fx := sharedFixture(f)
	v := fuzzVerifier(f, fx)
	f.Add(readPEM(f, fx.Alice.Chain))
	f.Add(readPEM(f, fx.Carol.Chain))
	f.Fuzz(func(t *testing.T, data []byte) {
		v.VerifyPEM(data, time.Now())
	})
}

func FuzzParseLSC(f *testing.F) {
	f.Add("/DC=ch/DC=cern/CN=voms\n/DC=ch/DC=cern/CN=CA\n" + lscNextChain + "\n\"/a\"\n/b\n")
	f.Fuzz(func(t *testing.T, text string) { parseLSC(text) })
}

func FuzzParseFQAN(f *testing.F) {
	f.Add("/cms/uscms/Role=production/Capability=NULL")
	f.Fuzz(func(t *testing.T, s string) {
		fq, err := ParseFQAN(s)
		if err == nil && (fq.Group == "" || fq.Group[0] != '/') {
			t.Errorf("%q: group %q", s, fq.Group)
		}
	})
}

func fuzzVerifier(f *testing.F, fx *fixture) *Verifier {
	v, err := New(Config{CertDir: fx.CADir, VOMSDir: fx.VOMSDir})
	if err != nil {
		f.Fatal(err)
	}
	return v
}

// addFixtureACs seeds with a real AC, when the tools are there.
func addFixtureACs(f *testing.F) {
	if !toolsPresent("openssl", "voms-proxy-fake", "grid-proxy-init", "python3") {
		return
	}
	fx := sharedFixture(f)
	b := fx.scratch(f)
	p := vomsProxyOf(fx, b, fx.Alice)
	if b.Err() != nil {
		f.Fatal(b.Err())
	}
	acs, err := splitACs(vomsExtension(f, p.Chain), 8)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(acs[0])
}

func addFixtureVOMSExtension(f *testing.F, fx *fixture) []byte {
	b := fx.scratch(f)
	p := vomsProxyOf(fx, b, fx.Alice)
	if b.Err() != nil {
		f.Fatal(b.Err())
	}
	ext := vomsExtension(f, p.Chain)
	f.Add(ext)
	return ext
}
