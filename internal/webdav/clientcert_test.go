package webdav

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/x509grid"
	"sitebox/internal/x509grid/x509test"
)

var pki x509test.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	pki.Remove()
	os.Exit(code)
}

// countingIdentifier counts the verifications it makes.
type countingIdentifier struct {
	inner auth.ChainIdentifier
	n     atomic.Int32
}

func (c *countingIdentifier) Identify(chain []*x509.Certificate, at time.Time) (*store.Identity, *x509grid.Result, error) {
	c.n.Add(1)
	return c.inner.Identify(chain, at)
}

// certBox serves /store/vo (read = "vo" of testvo) and /store/tok
// (tokens) through the guard, over TLS asking for client certificates
// as the box's listener does; the identifier verifies with the test PKI.
type certBox struct {
	srv   *httptest.Server
	ids   *countingIdentifier
	certs *ClientCerts
}

func newCertBox(t *testing.T, p *x509test.PKI) *certBox {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := auth.NewPolicy([]auth.Namespace{
		{Prefix: "/store/vo", Read: auth.ReadVO, VOs: []string{x509test.TestVO}},
		{Prefix: "/store/tok", Read: auth.ReadToken},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &auth.X509Settings{CertDir: p.CADir, VOMSDir: p.VOMSDir, CRL: "try"}
	x, err := s.X509()
	if err != nil {
		t.Fatal(err)
	}
	cb := &certBox{ids: &countingIdentifier{inner: x}}
	authn := auth.NewAuthenticator(auth.Verifiers{Tokens: fakeTokens{}, X509: cb.ids}, nil)
	cb.certs = NewClientCerts(authn, nil)
	h := New(Config{Auth: authn, Certificates: cb.certs}, auth.NewGuard(o, pol, nil), nil)
	cb.srv = httptest.NewUnstartedServer(h)
	cb.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	cb.srv.Config.ConnContext = cb.certs.ConnContext
	cb.srv.StartTLS()
	t.Cleanup(func() { cb.srv.Close(); o.Close() })
	writeFile(t, dir, "vo/f", []byte("vo data"))
	writeFile(t, dir, "tok/f", []byte("token data"))
	return cb
}

// client presents the proxy file's chain (nil: none) on its connections.
func (cb *certBox) client(t *testing.T, proxyFile string) *http.Client {
	t.Helper()
	tc := cb.srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	if proxyFile != "" {
		cert, err := tls.LoadX509KeyPair(proxyFile, proxyFile)
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, url string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A VOMS proxy reads its VO's namespace; refusals are 403 with the
// reason, whatever else the box takes; a bearer token wins over the
// certificate; a keep-alive connection is verified once.
func TestClientCertificates(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, nil)
	plain := b.OpenSSLProxy(p.Alice, "proxy")
	eve := b.OpenSSLProxy(p.Eve, "proxy")
	unlisted := b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.TestVO, x509test.VOMS2Host, []string{x509test.TestFQAN})
	b.OK(t)
	cb := newCertBox(t, p)
	for _, c := range []struct {
		name, proxy, path string
		hdr               []string
		want              int
		says              string
	}{
		{"VOMS proxy on its VO's path", vp.Chain, "/store/vo/f", nil, 200, "vo data"},
		{"no certificate", "", "/store/vo/f", nil, 401, "no token"},
		{"plain proxy on a VO path", plain.Chain, "/store/vo/f", nil, 403, "has no VOMS attributes of testvo"},
		{"proxy of an unknown CA", eve.Chain, "/store/vo/f", nil, 403, "client certificate refused: "},
		{"AC of an unlisted VOMS server", unlisted.Chain, "/store/vo/f", nil, 403, "VOMS attributes not accepted: "},
		{"a token wins", vp.Chain, "/store/vo/f", []string{"Authorization", "Bearer good-bob"}, 403, "token has no VO groups"},
		{"a refused token wins", vp.Chain, "/store/vo/f", []string{"Authorization", "Bearer forged"}, 401, "signature invalid"},
		{"a token where one is needed", vp.Chain, "/store/tok/f", []string{"Authorization", "Bearer good-bob"}, 200, "token data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := get(t, cb.client(t, c.proxy), cb.srv.URL+c.path, c.hdr...)
			if code != c.want || !strings.Contains(body, c.says) || strings.Count(body, "VOMS attributes not accepted") > 1 {
				t.Errorf("%d %q, want %d saying %q", code, body, c.want, c.says)
			}
			t.Logf("%d %s", code, strings.TrimSpace(body))
		})
	}

	cb.ids.n.Store(0)
	c := cb.client(t, vp.Chain)
	for range 5 {
		if code, _ := get(t, c, cb.srv.URL+"/store/vo/f"); code != 200 {
			t.Fatalf("keep-alive request: %d", code)
		}
	}
	if n := cb.ids.n.Load(); n != 1 {
		t.Errorf("5 requests on one connection: %d verifications, want 1", n)
	}
	get(t, cb.client(t, vp.Chain), cb.srv.URL+"/store/vo/f")
	if n := cb.ids.n.Load(); n != 2 {
		t.Errorf("a second connection: %d verifications in all, want 2", n)
	}
}

// A connection verified while the proxy was valid is refused once the
// proxy expires, though the connection stays open.
func TestClientCertificateExpiresOnConnection(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, nil)
	b.OK(t)
	cb := newCertBox(t, p)
	var now atomic.Pointer[time.Time]
	start := time.Now()
	now.Store(&start)
	cb.certs.now = func() time.Time { return *now.Load() }
	c := cb.client(t, vp.Chain)
	if code, body := get(t, c, cb.srv.URL+"/store/vo/f"); code != 200 {
		t.Fatalf("while valid: %d %s", code, body)
	}
	later := start.Add(13 * time.Hour) // voms-proxy-fake's proxy lives 12 hours
	now.Store(&later)
	code, body := get(t, c, cb.srv.URL+"/store/vo/f")
	if code != 403 || !strings.Contains(body, "expired") {
		t.Errorf("after expiry on the same connection: %d %q", code, body)
	}
	if n := cb.ids.n.Load(); n != 2 {
		t.Errorf("%d verifications, want 2 (the second after expiry)", n)
	}
}

// selfSigned is a small certificate of its own key.
func selfSigned(t *testing.T, cn string) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// A client presenting hundreds of certificates is refused at once by
// the chain limit, and one past TLS's bound for a certificate message
// (256 KiB in Go) fails its handshake; other clients are served
// meanwhile.
func TestClientCertificateFlood(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, nil)
	b.OK(t)
	cb := newCertBox(t, p)
	leaf, key := selfSigned(t, "flood")
	junk, _ := selfSigned(t, "junk")
	flood := func(n int) *http.Client {
		chain := [][]byte{leaf}
		for range n {
			chain = append(chain, junk)
		}
		c := cb.client(t, "")
		c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{{Certificate: chain, PrivateKey: key}}
		return c
	}
	start := time.Now()
	code, body := get(t, flood(400), cb.srv.URL+"/store/vo/f")
	if code != 403 || !strings.Contains(body, "401 certificates (limit 12)") {
		t.Errorf("400 certificates: %d %q", code, body)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("400 certificates took %v", took)
	}
	if _, err := flood(2000).Get(cb.srv.URL + "/store/vo/f"); err == nil {
		t.Error("a certificate message over 256 KiB was accepted")
	}
	if code, _ := get(t, cb.client(t, vp.Chain), cb.srv.URL+"/store/vo/f"); code != 200 {
		t.Errorf("a VOMS proxy after the floods: %d", code)
	}
}

// A client presenting someone's proxy without its key cannot complete
// the handshake: TLS checks the CertificateVerify signature with the
// leaf's public key, the leaf ClientCerts then verifies.
func TestClientCertificateWithoutItsKey(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, nil)
	b.OK(t)
	cb := newCertBox(t, p)
	stolen, err := tls.LoadX509KeyPair(vp.Chain, vp.Chain)
	if err != nil {
		t.Fatal(err)
	}
	// A key of the same kind, so the handshake gets as far as checking
	// the signature.
	otherKey, err := rsa.GenerateKey(rand.Reader, stolen.Leaf.PublicKey.(*rsa.PublicKey).N.BitLen())
	if err != nil {
		t.Fatal(err)
	}
	stolen.PrivateKey = otherKey
	c := cb.client(t, "")
	c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{stolen}
	if resp, err := c.Get(cb.srv.URL + "/store/vo/f"); err == nil {
		resp.Body.Close()
		t.Fatalf("a proxy presented without its key: %s", resp.Status)
	}
	if n := cb.ids.n.Load(); n != 0 {
		t.Errorf("%d verifications of a chain whose key was not proven", n)
	}
}
