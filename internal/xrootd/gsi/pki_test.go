package gsi

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid/x509test"
)

// testPKI is a CA, a host credential for localhost and a user with a
// proxy, made in Go; the chain's checks are x509grid's, so the proxy
// here needs no proxyCertInfo and Verify is a stand-in that names the
// chain's last certificate.
type testPKI struct {
	ca       *x509.Certificate
	caKey    *rsa.PrivateKey
	host     *x509.Certificate
	hostKey  *rsa.PrivateKey
	user     *x509.Certificate
	userKey  *rsa.PrivateKey
	proxy    *x509.Certificate
	proxyKey *rsa.PrivateKey
	otherKey *rsa.PrivateKey // a key no certificate holds
	roots    *x509.CertPool
	caHash   string // the CA's "<hash>.0"
	verifyMu sync.Mutex
	verified int // calls of verify
}

var (
	pkiOnce sync.Once
	pkiVal  *testPKI
	pkiErr  error
)

// sharedPKI makes the keys once per test binary: RSA generation is slow.
func sharedPKI(t testing.TB) *testPKI {
	t.Helper()
	pkiOnce.Do(func() { pkiVal, pkiErr = newTestPKI() })
	if pkiErr != nil {
		t.Fatal(pkiErr)
	}
	return pkiVal
}

func newTestPKI() (*testPKI, error) {
	keys := make([]*rsa.PrivateKey, 5)
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	p := &testPKI{caKey: keys[0], hostKey: keys[1], userKey: keys[2], proxyKey: keys[3], otherKey: keys[4]}
	now := time.Now()
	caName := pkix.Name{Organization: []string{"example"}, CommonName: "Test CA"}
	var err error
	p.ca, err = x509test.Sign(&x509.Certificate{Subject: caName, IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign},
		nil, p.caKey, &p.caKey.PublicKey, now)
	if err != nil {
		return nil, err
	}
	p.host, err = x509test.Sign(&x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		p.ca, p.caKey, &p.hostKey.PublicKey, now)
	if err != nil {
		return nil, err
	}
	p.user, err = x509test.Sign(&x509.Certificate{Subject: pkix.Name{Organization: []string{"example"}, CommonName: "Alice"}},
		p.ca, p.caKey, &p.userKey.PublicKey, now)
	if err != nil {
		return nil, err
	}
	p.proxy, err = x509test.Sign(&x509.Certificate{Subject: pkix.Name{Organization: []string{"example"}, CommonName: "Alice", SerialNumber: "1"}},
		p.user, p.userKey, &p.proxyKey.PublicKey, now)
	if err != nil {
		return nil, err
	}
	p.roots = x509.NewCertPool()
	p.roots.AddCert(p.ca)
	hashes, err := IssuerHashes(p.host)
	if err != nil {
		return nil, err
	}
	p.caHash = hashes[:10]
	return p, nil
}

// verify stands in for x509grid: the user is the chain's last
// certificate.
func (p *testPKI) verify(chain []*x509.Certificate, _ time.Time) (*store.Identity, error) {
	p.verifyMu.Lock()
	p.verified++
	p.verifyMu.Unlock()
	if len(chain) != 2 || chain[1].Subject.CommonName != "Alice" {
		return nil, errors.New("not Alice's chain")
	}
	return &store.Identity{Subject: "/O=example/CN=Alice", Issuer: "x509:/O=example/CN=Test CA", Groups: []string{"/testvo"}}, nil
}

// server is a gsi server for the PKI's host credential.
func (p *testPKI) server(t testing.TB, edit ...func(*Config)) *Server {
	t.Helper()
	cfg := Config{Cert: p.host, Key: p.hostKey, Verify: p.verify}
	for _, e := range edit {
		e(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// client is Alice's client with her proxy, unless chain and key say
// otherwise.
func (p *testPKI) client(t testing.TB) *Client {
	t.Helper()
	return p.clientWith(t, p.chain(), p.proxyKey)
}

func (p *testPKI) clientWith(t testing.TB, chain []*x509.Certificate, key *rsa.PrivateKey) *Client {
	t.Helper()
	c, err := NewClient(ClientConfig{Chain: chain, Key: key, Roots: p.roots, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chain is Alice's proxy chain as a client sends it.
func (p *testPKI) chain() []*x509.Certificate { return []*x509.Certificate{p.proxy, p.user} }

// verifiedCount is how often verify was called.
func (p *testPKI) verifiedCount() int {
	p.verifyMu.Lock()
	defer p.verifyMu.Unlock()
	return p.verified
}
