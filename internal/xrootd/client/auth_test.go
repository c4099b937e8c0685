package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/tlsutil"
	"sitebox/internal/xrootd/server"
	"sitebox/internal/xrootd/xrdtest"
)

// fakeTokens accepts "good-<subject>" and refuses anything else.
type fakeTokens struct{}

func (fakeTokens) Verify(_ context.Context, raw string) (*store.Identity, error) {
	if sub, ok := strings.CutPrefix(raw, "good-"); ok {
		return &store.Identity{Subject: sub, Groups: []string{"/cms"}}, nil
	}
	return nil, errors.New("token signature invalid")
}

// secureServer serves a fresh origin over root:// with TLS and tokens;
// it returns the address, the store (which records each call's request)
// and a client TLS config trusting the server's certificate.
func secureServer(t *testing.T) (string, *xrdtest.RouteStore, *tls.Config) {
	t.Helper()
	o, dir := newOrigin(t)
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("secret data"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	stc, err := tlsutil.LoadOrCreate("", "", state, nil)
	if err != nil {
		t.Fatal(err)
	}
	pem, _ := os.ReadFile(filepath.Join(state, tlsutil.CertName))
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	rs := &xrdtest.RouteStore{Store: o}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{TLS: stc, Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: fakeTokens{}}, nil)}, rs, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return ln.Addr().String(), rs, &tls.Config{RootCAs: pool}
}

// roots:// with a token: TLS before login, ztn authentication, and the
// store sees the identity and TLS on every call.
func TestRootsWithZTN(t *testing.T) {
	addr, rs, tc := secureServer(t)
	ctx := testCtx(t)
	fs := NewFSOptions(addr, Options{TLS: tc, Options: outbound.Options{Token: "good-alice"}})
	defer fs.Close()
	f, err := fs.Open(ctx, "/f")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if n, err := f.ReadAt(buf, 0); n != 11 || string(buf) != "secret data" {
		t.Fatalf("read over TLS: %d %v %q", n, err, buf)
	}
	f.Close()
	c := rs.Last("open")
	if c == nil || !c.Req.TLS || c.Req.Identity == nil || c.Req.Identity.Subject != "alice" {
		t.Fatalf("store saw %+v", c)
	}
	if !f.(*File).c.TLS() {
		t.Error("connection is not TLS")
	}

	// Without a token the client falls back to unix: anonymous over TLS.
	anon := NewFSOptions(addr, Options{TLS: tc})
	defer anon.Close()
	if _, err := anon.Stat(ctx, "/f"); err != nil {
		t.Fatal(err)
	}
	if c := rs.Last("stat"); c.Req.Identity != nil || !c.Req.TLS {
		t.Errorf("anonymous TLS client seen as %+v", c.Req)
	}

	// A bad token fails ztn; unix, next in the server's list, succeeds
	// anonymously (as XrdCl falls through the list).
	bad := NewFSOptions(addr, Options{TLS: tc, Options: outbound.Options{Token: "forged"}})
	defer bad.Close()
	if _, err := bad.Stat(ctx, "/f"); err != nil {
		t.Fatal(err)
	}
	if c := rs.Last("stat"); c.Req.Identity != nil {
		t.Errorf("forged token accepted: %+v", c.Req.Identity)
	}
}

// roots:// to a server that has no TLS fails clearly; a wrong CA fails the
// handshake.
func TestRootsRefused(t *testing.T) {
	o, _ := newOrigin(t)
	plain := serve(t, o)
	ctx := testCtx(t)
	_, err := DialOptions(ctx, plain, Options{TLS: &tls.Config{}})
	if err == nil || !strings.Contains(err.Error(), "does not support TLS") {
		t.Errorf("roots:// to a plain server: %v", err)
	}
	addr, _, _ := secureServer(t)
	if _, err := DialOptions(ctx, addr, Options{TLS: &tls.Config{RootCAs: x509.NewCertPool()}}); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

// On a plain connection tokens travel as authz= CGI, verified per
// request; a refused one is the request's AuthError.
func TestAuthzCGI(t *testing.T) {
	addr, rs, _ := secureServer(t)
	ctx := testCtx(t)
	fs := NewFS(addr)
	defer fs.Close()
	if _, err := fs.Stat(ctx, "/f?authz=Bearer%20good-bob"); err != nil {
		t.Fatal(err)
	}
	if c := rs.Last("stat"); c.Req.Identity == nil || c.Req.Identity.Subject != "bob" || c.Req.TLS {
		t.Errorf("authz token: %+v", c.Req)
	}
	if _, err := fs.Stat(ctx, "/f?authz=forged"); err != nil {
		t.Fatal(err) // no policy in this store: the error is only recorded
	}
	if c := rs.Last("stat"); c.Req.Identity != nil || c.Req.AuthError == nil {
		t.Errorf("forged authz: %+v", c.Req)
	}
}
