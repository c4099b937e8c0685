package server

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/x509grid/x509test"
	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
)

// gsiPKI is a CA, a host credential for localhost, and users whose
// chains the stand-in verifier maps: "Alice" with group /testvo,
// "Plain" with none. Chains are checked by x509grid in the box; here
// the exchange and what follows it on the session are under test.
type gsiPKI struct {
	roots      *x509.CertPool
	host       *x509.Certificate
	hostKey    *rsa.PrivateKey
	users      map[string][]*x509.Certificate // name → chain, leaf first
	userKey    *rsa.PrivateKey                // every chain's leaf key
	strangeKey *rsa.PrivateKey                // no certificate's
}

var (
	gsiPKIOnce sync.Once
	gsiPKIVal  *gsiPKI
	gsiPKIErr  error
)

func sharedGSIPKI(t *testing.T) *gsiPKI {
	t.Helper()
	gsiPKIOnce.Do(func() { gsiPKIVal, gsiPKIErr = newGSIPKI() })
	if gsiPKIErr != nil {
		t.Fatal(gsiPKIErr)
	}
	return gsiPKIVal
}

func newGSIPKI() (*gsiPKI, error) {
	var keys [4]*rsa.PrivateKey
	for i := range keys {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	caKey := keys[0]
	p := &gsiPKI{hostKey: keys[1], userKey: keys[2], strangeKey: keys[3], roots: x509.NewCertPool(), users: map[string][]*x509.Certificate{}}
	ca, err := x509test.Sign(&x509.Certificate{Subject: pkix.Name{CommonName: "Test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}, nil, caKey, &caKey.PublicKey, time.Now())
	if err != nil {
		return nil, err
	}
	p.roots.AddCert(ca)
	if p.host, err = x509test.Sign(&x509.Certificate{Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}, ca, caKey, &p.hostKey.PublicKey, time.Now()); err != nil {
		return nil, err
	}
	for _, name := range []string{"Alice", "Plain"} {
		c, err := x509test.Sign(&x509.Certificate{Subject: pkix.Name{CommonName: name}}, ca, caKey, &p.userKey.PublicKey, time.Now())
		if err != nil {
			return nil, err
		}
		p.users[name] = []*x509.Certificate{c}
	}
	return p, nil
}

// verify stands in for auth.X509: Alice is of /testvo, Plain of no VO.
func (p *gsiPKI) verify(chain []*x509.Certificate, _ time.Time) (*store.Identity, error) {
	id := &store.Identity{Method: auth.MethodX509, Subject: "/CN=" + chain[0].Subject.CommonName, Issuer: "x509:/CN=Test CA"}
	switch chain[0].Subject.CommonName {
	case "Alice":
		id.Groups = []string{"/testvo"}
	case "Plain":
	default:
		return nil, errors.New("certificate unknown")
	}
	return id, nil
}

func (p *gsiPKI) server(t *testing.T) *gsi.Server {
	t.Helper()
	g, err := gsi.New(gsi.Config{Cert: p.host, Key: p.hostKey, Verify: p.verify})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (p *gsiPKI) client(t *testing.T, user string, key *rsa.PrivateKey) *gsi.Client {
	t.Helper()
	c, err := gsi.NewClient(gsi.ClientConfig{Chain: p.users[user], Key: key, Roots: p.roots, ServerName: "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// voServer serves a directory whose /vo is readable by /testvo only.
func voServer(t *testing.T, p *gsiPKI) (addr, dir string) {
	t.Helper()
	st, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "vo", "f"), []byte("vo data"))
	pol, err := auth.NewPolicy([]auth.Namespace{{Prefix: "/vo", Read: auth.ReadVO, VOs: []string{"testvo"}}})
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, Config{GSI: p.server(t)}, auth.NewGuard(st, pol, nil)), dir
}

// gsiLogin logs in and returns the offer of gsi in the login answer.
func gsiLogin(t *testing.T, addr string) (*rawConn, string) {
	t.Helper()
	r, sec := loginKrb5(t, addr)
	for _, p := range strings.Split(sec, "&P=") {
		if strings.HasPrefix(p, "gsi,") {
			return r, p
		}
	}
	t.Fatalf("login answer %q offers no gsi", sec)
	return nil, ""
}

// authGSI sends one kXR_auth gsi step.
func (r *rawConn) authGSI(cred []byte) (uint16, []byte) {
	r.t.Helper()
	var ab [16]byte
	copy(ab[12:], "gsi")
	return r.call(proto.ReqAuth, ab, cred)
}

// gsiExchange runs both steps with c, failing the test unless the
// first is answered with kXR_authmore; it returns the second's answer.
func (r *rawConn) gsiExchange(c *gsi.Client, offer string) (uint16, []byte) {
	r.t.Helper()
	m1, err := c.Start(offer)
	if err != nil {
		r.t.Fatal(err)
	}
	st, body := r.authGSI(m1)
	if st != proto.StatusAuthMore {
		code, msg := errOf(body)
		r.t.Fatalf("step 1000: status %d (%d %s), want kXR_authmore", st, code, msg)
	}
	m2, err := c.Continue(body)
	if err != nil {
		r.t.Fatalf("the client refused the server: %v", err)
	}
	return r.authGSI(m2)
}

// openErr opens path for reading and returns the error answer, 0 if it
// opened.
func (r *rawConn) openErr(path string) (int32, string) {
	var ob [16]byte
	st, body := r.call(proto.ReqOpen, ob, []byte(path))
	if st == proto.StatusOK {
		return 0, ""
	}
	return errOf(body)
}

func TestGSILogin(t *testing.T) {
	p := sharedGSIPKI(t)
	addr, _ := voServer(t, p)
	r, offer := gsiLogin(t, addr)
	if !strings.HasPrefix(offer, "gsi,v:10600,c:ssl,ca:") {
		t.Errorf("offer %q", offer)
	}
	// Before the exchange ends, nothing else is served.
	if code, _ := r.openErr("/vo/f"); code != proto.ErrNotAuthorized {
		t.Errorf("open before kXR_auth: %d", code)
	}
	if st, body := r.gsiExchange(p.client(t, "Alice", p.userKey), offer); st != proto.StatusOK {
		t.Fatalf("step 1001: status %d %q", st, body)
	}
	if code, msg := r.openErr("/vo/f"); code != 0 {
		t.Errorf("alice (/testvo) opens /vo/f: %d %s", code, msg)
	}
	// A user of no VO authenticates, and the policy refuses her.
	r2, offer := gsiLogin(t, addr)
	if st, _ := r2.gsiExchange(p.client(t, "Plain", p.userKey), offer); st != proto.StatusOK {
		t.Fatalf("plain: status %d", st)
	}
	if code, msg := r2.openErr("/vo/f"); code != proto.ErrNotAuthorized || !strings.Contains(msg, "alone may read /vo/f") {
		t.Errorf("plain opens /vo/f: %d %s", code, msg)
	}
}

// A refused exchange is the session's reason for every request, also
// after XrdCl falls back to unix; the client learns it in the reply.
func TestGSIRefusedKeepsReason(t *testing.T) {
	p := sharedGSIPKI(t)
	addr, _ := voServer(t, p)
	r, offer := gsiLogin(t, addr)
	st, body := r.gsiExchange(p.client(t, "Alice", p.strangeKey), offer)
	code, msg := errOf(body)
	if st != proto.StatusError || code != proto.ErrAuthFailed || !strings.Contains(msg, "gsi: the public key the client sent is not its certificate's") {
		t.Fatalf("a key that is not the certificate's: status %d %d %q", st, code, msg)
	}
	var ab [16]byte
	copy(ab[12:], "unix")
	if st, _ := r.call(proto.ReqAuth, ab, []byte("unix\x00")); st != proto.StatusOK {
		t.Fatalf("unix after a refused gsi: %d", st)
	}
	if code, msg := r.openErr("/vo/f"); code != proto.ErrNotAuthorized || !strings.Contains(msg, "not its certificate's") {
		t.Errorf("open after the fallback: %d %s, want the gsi reason", code, msg)
	}
}

// Hostile kXR_auth credentials are refused one by one, each session
// stays usable, and a client stalled between the steps holds up no one.
func TestGSIHostile(t *testing.T) {
	p := sharedGSIPKI(t)
	addr, _ := voServer(t, p)
	stalled, offer := gsiLogin(t, addr)
	m1, _ := p.client(t, "Alice", p.userKey).Start(offer)
	if st, _ := stalled.authGSI(m1); st != proto.StatusAuthMore {
		t.Fatalf("stalled client's first step: %d", st)
	}
	// stalled sends nothing more.
	big := func(n int) []byte {
		b := binary.BigEndian.AppendUint32([]byte("gsi\x00"), 1000)
		b = binary.BigEndian.AppendUint32(b, 3001)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		return append(b, make([]byte, n)...)
	}
	cases := []struct {
		name string
		cred []byte
		code int32
		text string
	}{
		{"garbage", []byte("\xde\xad\xbe\xef garbage"), proto.ErrAuthFailed, "malformed gsi buffer"},
		{"truncated", m1[:len(m1)/2], proto.ErrAuthFailed, "malformed gsi buffer"},
		{"empty", nil, proto.ErrAuthFailed, "malformed gsi buffer"},
		{"bucket larger than its buffer", big(100)[:30], proto.ErrAuthFailed, "claims 100 bytes"},
		{"oversized buffer", big(200 << 10), proto.ErrAuthFailed, "gsi buffer too large"},
		{"over the request limit", big(300 << 10), proto.ErrArgTooLong, "exceeds the limit"},
		{"step 1001 first", (&gsi.Buffer{Protocol: "gsi", Step: gsi.StepCert}).Marshal(), proto.ErrAuthFailed, "came before the certificate request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, _ := gsiLogin(t, addr)
			st, body := r.authGSI(c.cred)
			code, msg := errOf(body)
			if st != proto.StatusError || code != c.code || !strings.Contains(msg, c.text) {
				t.Errorf("status %d %d %q, want %d naming %q", st, code, msg, c.code, c.text)
			}
			if st, _ := r.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
				t.Errorf("the session died: ping %d", st)
			}
		})
	}
	r, offer := gsiLogin(t, addr)
	if st, _ := r.gsiExchange(p.client(t, "Alice", p.userKey), offer); st != proto.StatusOK {
		t.Errorf("a good client beside a stalled one: %d", st)
	}
	if st, _ := stalled.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
		t.Errorf("the stalled session: ping %d", st)
	}
}

// Without a gsi server the login offers no gsi and a gsi credential is
// refused, as before.
func TestNoGSI(t *testing.T) {
	addr, _ := testEnv(t, Config{Auth: kerberosOnly()})
	r, sec := loginKrb5(t, addr)
	if strings.Contains(sec, "gsi") {
		t.Errorf("login offers %q", sec)
	}
	st, body := r.authGSI([]byte("gsi\x00"))
	if code, msg := errOf(body); st != proto.StatusError || code != proto.ErrAuthFailed || !strings.Contains(msg, "not offered here") {
		t.Errorf("status %d %d %q", st, code, msg)
	}
}
