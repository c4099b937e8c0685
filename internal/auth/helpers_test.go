package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testTLS is a self-signed certificate for 127.0.0.1 and a client that
// trusts only it, shared by a test's issuer servers.
type testTLS struct {
	server *tls.Config
	client *http.Client
}

func newTestTLS(t *testing.T) *testTLS {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "auth test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return &testTLS{
		server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		client: &http.Client{Timeout: 5 * time.Second, Transport: tr},
	}
}

// testIssuer is an OIDC issuer on an httptest TLS server: discovery at
// /.well-known/openid-configuration, keys at /jwks (counted).
type testIssuer struct {
	srv     *httptest.Server
	mu      sync.Mutex
	jwks    []byte
	fetches atomic.Int64
}

func (ti *testIssuer) setJWKS(b []byte) {
	ti.mu.Lock()
	ti.jwks = b
	ti.mu.Unlock()
}

func (ti *testIssuer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": ti.srv.URL, "jwks_uri": ti.srv.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		ti.fetches.Add(1)
		ti.mu.Lock()
		defer ti.mu.Unlock()
		w.Write(ti.jwks)
	})
	return mux
}

// startIssuer serves jwks on ln (nil: a new 127.0.0.1:0 listener).
func startIssuer(t *testing.T, tt *testTLS, ln net.Listener, jwks []byte) *testIssuer {
	t.Helper()
	ti := &testIssuer{jwks: jwks}
	ti.srv = httptest.NewUnstartedServer(ti.handler())
	if ln != nil {
		ti.srv.Listener.Close()
		ti.srv.Listener = ln
	}
	ti.srv.TLS = tt.server.Clone()
	ti.srv.StartTLS()
	t.Cleanup(ti.srv.Close)
	return ti
}

// jwksOf renders public keys by kid as a JWKS.
func jwksOf(t *testing.T, keys map[string]any) []byte {
	t.Helper()
	var out []map[string]string
	for kid, k := range keys {
		switch k := k.(type) {
		case *rsa.PublicKey:
			out = append(out, map[string]string{"kty": "RSA", "kid": kid, "use": "sig",
				"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())})
		case *ecdsa.PublicKey:
			raw, err := k.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, map[string]string{"kty": "EC", "kid": kid, "crv": "P-256",
				"x": b64(raw[1:33]), "y": b64(raw[33:])})
		default:
			t.Fatalf("jwksOf: %T", k)
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": out})
	return b
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sign makes a token with the given algorithm, kid and claims.
func sign(t *testing.T, alg, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	var m jwt.SigningMethod
	switch alg {
	case "RS256":
		m = jwt.SigningMethodRS256
	case "ES256":
		m = jwt.SigningMethodES256
	case "HS256":
		m = jwt.SigningMethodHS256
	case "none":
		m = jwt.SigningMethodNone
	default:
		t.Fatalf("sign: alg %s", alg)
	}
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// claimsFor returns valid WLCG claims from iss, for sub alice, that tests
// then adjust.
func claimsFor(iss string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss": iss, "sub": "alice", "aud": AnyAudience,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"wlcg.ver": "1.0", "scope": "storage.read:/cms",
	}
}

// with returns a copy of c with kv set (a nil value deletes the claim).
func with(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustEC(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newTestVerifier(t *testing.T, cfg VerifierConfig) *Verifier {
	t.Helper()
	v, err := NewVerifier(cfg, nil)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		v.Close()
	})
	return v
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
