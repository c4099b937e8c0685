package x509grid

import (
	"os"
	"testing"

	"sitebox/internal/x509grid/x509test"
)

// The subjects of the test PKI (x509test).
const (
	rootDN    = x509test.RootDN
	interDN   = x509test.InterDN
	otherDN   = x509test.OtherDN
	aliceDN   = x509test.AliceDN
	bobDN     = x509test.BobDN
	carolDN   = x509test.CarolDN
	malloryDN = x509test.MalloryDN
	oldDN     = x509test.OldDN
	futureDN  = x509test.FutureDN
	eveDN     = x509test.EveDN
	vomsDN    = x509test.VOMSDN
	voms2DN   = x509test.VOMS2DN
	vomsHost  = x509test.VOMSHost
	voms2Host = x509test.VOMS2Host
	testVO    = x509test.TestVO
	otherVO   = x509test.OtherVO
	testFQAN  = x509test.TestFQAN
	prodFQAN  = x509test.ProdFQAN
	otherFQAN = x509test.OtherFQAN
)

// fixture is the PKI most tests share (x509test.PKI): a root CA with an
// intermediate, another root the CA directory does not hold, users, VOMS
// servers, and the CA directory and vomsdir that trust them.
type fixture struct {
	*x509test.PKI
}

var shared x509test.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// sharedFixture builds the shared PKI on first use.
func sharedFixture(t testing.TB) *fixture {
	t.Helper()
	requireTools(t, "python3")
	return &fixture{shared.Get(t)}
}

// verifier is a Verifier of the fixture's CA directory and vomsdir.
func (fx *fixture) verifier(t *testing.T, edit ...func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{CertDir: fx.CADir, VOMSDir: fx.VOMSDir}
	for _, e := range edit {
		e(&cfg)
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := v.Warnings(); len(w) > 0 {
		t.Logf("verifier warnings: %q", w)
	}
	return v
}

// scratch is a directory for one test's own credentials.
func (fx *fixture) scratch(t testing.TB) *builder { t.Helper(); return fx.Scratch(t) }

// installCADir lays out a CA directory trusting the root and the
// intermediate, with the given CRLs.
func (fx *fixture) installCADir(dir string, crls ...string) { fx.InstallCADir(dir, crls...) }
