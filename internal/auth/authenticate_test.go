package auth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/x509grid"
	"sitebox/internal/x509grid/x509test"
)

// fakeKerberos takes the AP-REQ "good" for service xrootd and the
// Negotiate value "spnego-good" as alice of EXAMPLE.ORG; its identities
// claim a method of their own, which the entry point must overrule.
type fakeKerberos struct{}

func (fakeKerberos) Principal(svc string) string { return svc + "/box.example.org@EXAMPLE.ORG" }

func (fakeKerberos) VerifyAPReq(raw []byte, svc string) (*store.Identity, error) {
	if string(raw) != "good" || svc != "xrootd" {
		return nil, errors.New("kerberos authentication refused: ticket expired")
	}
	return &store.Identity{Method: "bogus", Subject: "alice", Issuer: "krb5:EXAMPLE.ORG", Groups: []string{"/cms"}}, nil
}

func (fakeKerberos) VerifyNegotiate(tok string) (*store.Identity, error) {
	if tok != "spnego-good" {
		return nil, errors.New("kerberos authentication refused: SPNEGO token carries no Kerberos mechanism token")
	}
	return &store.Identity{Subject: "alice", Issuer: "krb5:EXAMPLE.ORG"}, nil
}

// tokenAlice takes "good" as alice of https://issuer; any other token
// is refused as a Verifier refuses it.
var tokenAlice = TokenFunc(func(_ context.Context, raw string) (*store.Identity, error) {
	if raw != "good" {
		return nil, deny("token signature invalid")
	}
	return &store.Identity{Subject: "alice", Issuer: "https://issuer"}, nil
})

// Each credential kind goes to its verifier and comes back stamped with
// how it was proven; a refusal keeps the verifier's reason; a kind the
// box takes no credential of is refused naming that; no credential is
// anonymous, never an error.
func TestAuthenticate(t *testing.T) {
	a := NewAuthenticator(Verifiers{Tokens: tokenAlice, Kerberos: fakeKerberos{}}, nil)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		cred    Credential
		method  string // of the identity; "" for none
		subject string
		refusal string // part of the error; "" for none
	}{
		{"no credential", nil, "", "", ""},
		{"token", Token("good"), MethodToken, "alice", ""},
		{"refused token", Token("forged"), "", "", "token signature invalid"},
		{"kerberos ticket", KerberosTicket{APReq: []byte("good"), Service: "xrootd"}, MethodKrb5, "alice", ""},
		{"ticket for another service", KerberosTicket{APReq: []byte("good"), Service: "HTTP"}, "", "", "ticket expired"},
		{"refused ticket", KerberosTicket{APReq: []byte("stale"), Service: "xrootd"}, "", "", "kerberos authentication refused: ticket expired"},
		{"negotiate", Negotiate("spnego-good"), MethodKrb5, "alice", ""},
		{"refused negotiate", Negotiate("garbage"), "", "", "no Kerberos mechanism token"},
		{"chain on a box without X.509", Chain{}, "", "", "this box takes no X.509 credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := a.Authenticate(ctx, c.cred)
			switch {
			case c.refusal != "":
				if id != nil || err == nil || !strings.Contains(err.Error(), c.refusal) {
					t.Fatalf("got %+v, %v; want a refusal saying %q", id, err, c.refusal)
				}
			case err != nil:
				t.Fatalf("refused: %v", err)
			case c.method == "":
				if id != nil {
					t.Fatalf("no credential proved %+v", id)
				}
			case id.Method != c.method || id.Subject != c.subject:
				t.Fatalf("identity %+v, want %s of %s", id, c.subject, c.method)
			}
		})
	}

	none := NewAuthenticator(Verifiers{}, nil)
	for _, c := range []struct {
		cred Credential
		want string
	}{
		{Token("good"), "this box takes no bearer tokens"},
		{KerberosTicket{APReq: []byte("good"), Service: "xrootd"}, "this box takes no Kerberos tickets"},
		{Negotiate("spnego-good"), "this box takes no Kerberos tickets"},
	} {
		id, err := none.Authenticate(ctx, c.cred)
		if id != nil || err == nil || err.Error() != c.want || !errors.Is(err, store.ErrPermission) {
			t.Errorf("%T on a box taking nothing: %+v, %v; want %q", c.cred, id, err, c.want)
		}
	}
	var nilAuth *Authenticator
	if _, err := nilAuth.Authenticate(ctx, Token("good")); err == nil {
		t.Error("a nil authenticator took a token")
	}
	if id, err := nilAuth.Authenticate(ctx, nil); id != nil || err != nil {
		t.Errorf("a nil authenticator and no credential: %+v, %v", id, err)
	}
}

// The entry point says what it takes, for the frontends to offer, and
// the Kerberos principal root:// announces.
func TestAuthenticatorTakes(t *testing.T) {
	a := NewAuthenticator(Verifiers{Kerberos: fakeKerberos{}}, nil)
	if a.Takes(MethodToken) || !a.Takes(MethodKrb5) || a.Takes(MethodX509) || a.Takes("unix") {
		t.Errorf("Kerberos only: takes token %v, krb5 %v, x509 %v", a.Takes(MethodToken), a.Takes(MethodKrb5), a.Takes(MethodX509))
	}
	if p := a.KerberosPrincipal("xrootd"); p != "xrootd/box.example.org@EXAMPLE.ORG" {
		t.Errorf("principal %q", p)
	}
	var nilAuth *Authenticator
	if nilAuth.Takes(MethodToken) || nilAuth.KerberosPrincipal("xrootd") != "" || NewAuthenticator(Verifiers{}, nil).Takes(MethodX509) {
		t.Error("an authenticator without verifiers takes something")
	}
}

// The identity handed back is the entry point's own: stamping the method
// leaves the verifier's (perhaps cached, shared) identity alone.
func TestAuthenticateCopies(t *testing.T) {
	shared := &store.Identity{Subject: "alice", Issuer: "https://issuer"}
	a := NewAuthenticator(Verifiers{Tokens: TokenFunc(func(context.Context, string) (*store.Identity, error) { return shared, nil })}, nil)
	id, err := a.Authenticate(context.Background(), Token("t"))
	if err != nil || id == shared || id.Method != MethodToken || shared.Method != "" {
		t.Errorf("identity %+v (shared %+v), %v", id, shared, err)
	}
	nothing := NewAuthenticator(Verifiers{Tokens: TokenFunc(func(context.Context, string) (*store.Identity, error) { return nil, nil })}, nil)
	if id, err := nothing.Authenticate(context.Background(), Token("t")); id != nil || err == nil {
		t.Errorf("a verifier proving nobody: %+v, %v", id, err)
	}
}

// Real X.509 chains through the entry point: a VOMS proxy is its DN
// under its CA, proven by x509, with its FQANs; an attribute certificate
// of a VOMS server the vomsdir does not list is named in Ignored and
// logged; a proxy of an unknown CA, an expired user's and a revoked
// one's are refused with the verifier's reason.
func TestAuthenticateChain(t *testing.T) {
	p := pki.Get(t)
	b := p.Scratch(t)
	vp := p.VOMSProxyOf(b, p.Alice, []string{x509test.ProdFQAN, x509test.TestFQAN})
	unlisted := b.VOMSProxy(p.Alice, p.VOMS2, p.CADir, x509test.TestVO, x509test.VOMS2Host, []string{x509test.TestFQAN})
	eve := b.OpenSSLProxy(p.Eve, "proxy")
	old := b.OpenSSLProxy(p.Old, "proxy")
	b.OK(t)
	s := &X509Settings{CertDir: p.CADir, VOMSDir: p.VOMSDir}
	s.defaults(func(string) string { return "" })
	x, err := s.X509()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	a := NewAuthenticator(Verifiers{X509: x}, slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()

	id, err := a.Authenticate(ctx, Chain{Certs: chainOf(t, vp.Chain)})
	if err != nil {
		t.Fatal(err)
	}
	if id.Method != MethodX509 || id.Subject != x509test.AliceDN || id.Issuer != X509IssuerPrefix+x509test.RootDN ||
		!slices.Equal(id.FQANs, []string{x509test.ProdFQAN, x509test.TestFQAN}) || len(id.Ignored) != 0 {
		t.Errorf("VOMS proxy: %+v", id)
	}
	attrs := LogAttrs(id)
	if !slices.Contains(attrs, any("x509")) || !slices.Contains(attrs, any("fqans")) {
		t.Errorf("log attributes %v lack the method or the FQANs", attrs)
	}

	id, err = a.Authenticate(ctx, Chain{Certs: chainOf(t, unlisted.Chain), At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(id.FQANs) != 0 || len(id.Ignored) != 1 || !strings.HasPrefix(id.Ignored[0], "VOMS attributes not accepted: ") {
		t.Errorf("AC of an unlisted server: %+v", id)
	}
	if !strings.Contains(logs.String(), `msg="VOMS attributes not accepted"`) {
		t.Errorf("the unlisted AC is not logged:\n%s", logs.String())
	}

	for _, c := range []struct {
		name string
		file string
		want error
	}{
		{"unknown CA", eve.Chain, x509grid.ErrUnknownCA},
		{"expired user certificate", old.Chain, x509grid.ErrExpired},
	} {
		id, err := a.Authenticate(ctx, Chain{Certs: chainOf(t, c.file)})
		if id != nil || !errors.Is(err, c.want) {
			t.Errorf("%s: %+v, %v; want %v", c.name, id, err, c.want)
		}
	}
	if _, err := a.Authenticate(ctx, Token("t")); err == nil || err.Error() != "this box takes no bearer tokens" {
		t.Errorf("a token on an X.509-only box: %v", err)
	}
}

// Log lines name an anonymous client as such.
func TestLogAttrsAnonymous(t *testing.T) {
	if got := LogAttrs(nil); !slices.Equal(got, []any{"auth", "anonymous"}) {
		t.Errorf("LogAttrs(nil) = %v", got)
	}
}
