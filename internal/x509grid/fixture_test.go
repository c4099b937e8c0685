package x509grid

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The subjects of the test PKI.
const (
	rootDN     = "/DC=org/DC=example/CN=Test Root CA"
	interDN    = "/DC=org/DC=example/OU=Grid/CN=Test Intermediate CA"
	otherDN    = "/DC=org/DC=other/CN=Other Root CA"
	aliceDN    = "/DC=org/DC=example/OU=People/CN=Alice Example"
	bobDN      = "/DC=org/DC=example/OU=People/CN=Bob Example"
	carolDN    = "/DC=org/DC=example/OU=Grid/CN=Carol Example"
	malloryDN  = "/DC=org/DC=example/OU=People/CN=Mallory Example"
	oldDN      = "/DC=org/DC=example/OU=People/CN=Old Example"
	futureDN   = "/DC=org/DC=example/OU=People/CN=Future Example"
	eveDN      = "/DC=org/DC=other/CN=Eve Other"
	vomsDN     = "/DC=org/DC=example/OU=Services/CN=voms.example.org"
	voms2DN    = "/DC=org/DC=example/OU=Services/CN=voms2.example.org"
	vomsHost   = "voms.example.org"
	voms2Host  = "voms2.example.org"
	testVO     = "testvo"
	otherVO    = "othervo"
	testFQAN   = "/testvo/Role=NULL/Capability=NULL"
	prodFQAN   = "/testvo/prod/Role=production/Capability=NULL"
	otherFQAN  = "/othervo/Role=NULL/Capability=NULL"
	fixtureTag = "x509grid-test"
)

// fixture is the PKI most tests share: a root CA with an intermediate,
// another root the CA directory does not hold, users, VOMS servers, and
// the CA directory and vomsdir that trust them.
type fixture struct {
	b                    *builder
	root, inter, other   *testCA
	alice, bob, carol    cred
	mallory, old, future cred
	eve, impostor        cred
	voms, voms2          cred
	caDir, vomsDir       string
}

var shared struct {
	once sync.Once
	fx   *fixture
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// sharedFixture builds the shared PKI on first use.
func sharedFixture(t testing.TB) *fixture {
	t.Helper()
	requireTools(t, "openssl", "voms-proxy-fake", "grid-proxy-init", "python3")
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", fixtureTag)
		if shared.err == nil {
			shared.fx, shared.err = buildFixture(shared.dir)
		}
	})
	if shared.err != nil {
		t.Fatalf("building the test PKI: %v", shared.err)
	}
	return shared.fx
}

func buildFixture(dir string) (*fixture, error) {
	b := &builder{dir: dir}
	b.write("ext.cnf", extensionsConf)
	fx := &fixture{b: b}
	fx.root = b.newRootCA("root", rootDN, false)
	fx.inter = b.newSubCA(fx.root, "inter", interDN)
	// The other root signs with ECDSA: voms-proxy-fake then signs its
	// users' proxies with SHA-1.
	fx.other = b.newRootCA("other", otherDN, true)
	fx.alice = b.issue(fx.root, "alice", aliceDN, "v3_user")
	fx.bob = b.issue(fx.root, "bob", bobDN, "v3_user")
	fx.carol = b.issue(fx.inter, "carol", carolDN, "v3_user")
	fx.carol.chain = b.cat("carol-chain.pem", fx.carol.cert, fx.inter.cert)
	fx.mallory = b.issue(fx.root, "mallory", malloryDN, "v3_user")
	fx.old = b.issue(fx.root, "old", oldDN, "v3_user", "-startdate", ago(72*time.Hour), "-enddate", ago(24*time.Hour))
	fx.future = b.issue(fx.root, "future", futureDN, "v3_user", "-startdate", ahead(24*time.Hour), "-enddate", ahead(72*time.Hour))
	fx.eve = b.issue(fx.other, "eve", eveDN, "v3_user")
	// Alice's name from another CA, with another key.
	fx.impostor = b.issue(fx.other, "impostor", aliceDN, "v3_user")
	fx.voms = b.issue(fx.root, "voms", vomsDN, "v3_host")
	fx.voms2 = b.issue(fx.root, "voms2", voms2DN, "v3_host")
	b.revoke(fx.root, fx.mallory, "keyCompromise")
	fx.caDir = b.path("certificates")
	fx.installCADir(fx.caDir, b.crl(fx.root), b.crl(fx.inter))
	fx.vomsDir = b.path("vomsdir")
	b.lsc(fx.vomsDir, testVO, vomsHost, vomsDN, rootDN)
	b.lsc(fx.vomsDir, otherVO, voms2Host, voms2DN, rootDN)
	return fx, b.err
}

// installCADir lays out a CA directory trusting the root and the
// intermediate, with the given CRLs.
func (fx *fixture) installCADir(dir string, crls ...string) {
	fx.b.installCA(dir, []*testCA{fx.root, fx.inter}, crls...)
}

// verifier is a Verifier of the fixture's CA directory and vomsdir.
func (fx *fixture) verifier(t *testing.T, edit ...func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{CertDir: fx.caDir, VOMSDir: fx.vomsDir}
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
func (fx *fixture) scratch(t testing.TB) *builder {
	t.Helper()
	// Only letters and digits: openssl's -CApath splits at ':'.
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, filepath.Base(t.Name()))
	dir := filepath.Join(fx.b.dir, fmt.Sprintf("t%d-%s", time.Now().UnixNano(), safe))
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	b := &builder{dir: dir}
	b.write("ext.cnf", extensionsConf)
	return b
}
