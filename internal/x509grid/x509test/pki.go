package x509test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The subjects and names of the test PKI.
const (
	RootDN    = "/DC=org/DC=example/CN=Test Root CA"
	InterDN   = "/DC=org/DC=example/OU=Grid/CN=Test Intermediate CA"
	OtherDN   = "/DC=org/DC=other/CN=Other Root CA"
	AliceDN   = "/DC=org/DC=example/OU=People/CN=Alice Example"
	BobDN     = "/DC=org/DC=example/OU=People/CN=Bob Example"
	CarolDN   = "/DC=org/DC=example/OU=Grid/CN=Carol Example"
	MalloryDN = "/DC=org/DC=example/OU=People/CN=Mallory Example"
	OldDN     = "/DC=org/DC=example/OU=People/CN=Old Example"
	FutureDN  = "/DC=org/DC=example/OU=People/CN=Future Example"
	EveDN     = "/DC=org/DC=other/CN=Eve Other"
	HostDN    = "/DC=org/DC=example/OU=Services/CN=localhost"
	VOMSDN    = "/DC=org/DC=example/OU=Services/CN=voms.example.org"
	VOMS2DN   = "/DC=org/DC=example/OU=Services/CN=voms2.example.org"
	VOMSHost  = "voms.example.org"
	VOMS2Host = "voms2.example.org"
	TestVO    = "testvo"
	OtherVO   = "othervo"
	TestFQAN  = "/testvo/Role=NULL/Capability=NULL"
	ProdFQAN  = "/testvo/prod/Role=production/Capability=NULL"
	OtherFQAN = "/othervo/Role=NULL/Capability=NULL"
)

// Tools are the programs a PKI is made with.
func Tools() []string { return []string{"openssl", "voms-proxy-fake", "grid-proxy-init"} }

// PKI is the credentials most tests share: a root CA with an
// intermediate, another root the CA directory does not hold, users (one
// revoked, one expired, one not yet valid, one of the other root, one
// impostor with Alice's name from the other root), a host certificate
// for localhost, two VOMS servers, and the CA directory and vomsdir that
// trust them: VOMSDN speaks for TestVO, VOMS2DN for OtherVO.
type PKI struct {
	*Builder
	Root, Inter, Other   *CA
	Alice, Bob, Carol    Cred
	Mallory, Old, Future Cred
	Eve, Impostor        Cred
	Host                 Cred
	VOMS, VOMS2          Cred
	CADir, VOMSDir       string
}

// NewPKI builds the PKI in dir, which must exist, with RSA keys of bits
// (0: the Builder's default).
func NewPKI(dir string, bits int) (*PKI, error) {
	b := NewBuilder(dir)
	b.Bits = bits
	p := &PKI{Builder: b}
	p.Root = b.NewRootCA("root", RootDN, false)
	p.Inter = b.NewSubCA(p.Root, "inter", InterDN)
	// The other root signs with ECDSA: voms-proxy-fake then signs its
	// users' proxies with SHA-1.
	p.Other = b.NewRootCA("other", OtherDN, true)
	p.Alice = b.Issue(p.Root, "alice", AliceDN, "v3_user")
	p.Bob = b.Issue(p.Root, "bob", BobDN, "v3_user")
	p.Carol = b.Issue(p.Inter, "carol", CarolDN, "v3_user")
	p.Carol.Chain = b.Cat("carol-chain.pem", p.Carol.Cert, p.Inter.Cert)
	p.Mallory = b.Issue(p.Root, "mallory", MalloryDN, "v3_user")
	p.Old = b.Issue(p.Root, "old", OldDN, "v3_user", "-startdate", Ago(72*time.Hour), "-enddate", Ago(24*time.Hour))
	p.Future = b.Issue(p.Root, "future", FutureDN, "v3_user", "-startdate", Ahead(24*time.Hour), "-enddate", Ahead(72*time.Hour))
	p.Eve = b.Issue(p.Other, "eve", EveDN, "v3_user")
	// Alice's name from another CA, with another key.
	p.Impostor = b.Issue(p.Other, "impostor", AliceDN, "v3_user")
	p.Host = b.Issue(p.Root, "host", HostDN, "v3_host_local")
	p.VOMS = b.Issue(p.Root, "voms", VOMSDN, "v3_host")
	p.VOMS2 = b.Issue(p.Root, "voms2", VOMS2DN, "v3_host")
	b.Revoke(p.Root, p.Mallory, "keyCompromise")
	p.CADir = b.Path("certificates")
	p.InstallCADir(p.CADir, b.CRL(p.Root), b.CRL(p.Inter))
	p.VOMSDir = b.Path("vomsdir")
	b.LSC(p.VOMSDir, TestVO, VOMSHost, VOMSDN, RootDN)
	b.LSC(p.VOMSDir, OtherVO, VOMS2Host, VOMS2DN, RootDN)
	return p, b.Err()
}

// InstallCADir lays out a CA directory trusting the root and the
// intermediate, with the given CRLs.
func (p *PKI) InstallCADir(dir string, crls ...string) {
	p.InstallCA(dir, []*CA{p.Root, p.Inter}, crls...)
}

// VOMSProxyOf makes user's VOMS proxy of TestVO with the FQANs (default
// TestFQAN), signed by the listed VOMS server; extra are further
// voms-proxy-fake options.
func (p *PKI) VOMSProxyOf(b *Builder, user Cred, fqans []string, extra ...string) Cred {
	if len(fqans) == 0 {
		fqans = []string{TestFQAN}
	}
	return b.VOMSProxy(user, p.VOMS, p.CADir, TestVO, VOMSHost, fqans, extra...)
}

// Scratch is a directory of its own for one test's credentials, below
// the PKI's (removed with it).
func (p *PKI) Scratch(t testing.TB) *Builder {
	t.Helper()
	// Only letters and digits: openssl's -CApath splits at ':'.
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, filepath.Base(t.Name()))
	dir := filepath.Join(p.Dir, fmt.Sprintf("t%d-%s", time.Now().UnixNano(), safe))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sb := NewBuilder(dir)
	sb.Bits = p.Bits
	return sb
}

// Shared is one PKI a test binary builds on first use and shares between
// its tests (making one takes seconds). The zero value is ready; the
// package's TestMain calls Remove after m.Run.
type Shared struct {
	// Bits is the size of the PKI's RSA keys (0: the Builder's default).
	Bits int
	once sync.Once
	pki  *PKI
	dir  string
	err  error
}

// Get builds the PKI on the first call, skipping the test (failing it
// under CI) when a tool is missing.
func (s *Shared) Get(t testing.TB) *PKI {
	t.Helper()
	RequireTools(t, Tools()...)
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "x509test-"); s.err == nil {
			s.pki, s.err = NewPKI(s.dir, s.Bits)
		}
	})
	if s.err != nil {
		t.Fatalf("building the test PKI: %v", s.err)
	}
	return s.pki
}

// Remove deletes the PKI, if one was built.
func (s *Shared) Remove() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}
