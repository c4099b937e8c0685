package server

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// fakeKerberos accepts the AP-REQ "good-ticket" as alice.
type fakeKerberos struct{}

func (fakeKerberos) Principal(svc string) string { return svc + "/box.example.org@EXAMPLE.ORG" }

func (fakeKerberos) VerifyAPReq(raw []byte, svc string) (*store.Identity, error) {
	if string(raw) != "good-ticket" || svc != "xrootd" {
		return nil, errors.New("kerberos authentication refused: ticket expired")
	}
	return &store.Identity{Subject: "alice", Issuer: "krb5:EXAMPLE.ORG"}, nil
}

func (fakeKerberos) VerifyNegotiate(string) (*store.Identity, error) {
	return nil, errors.New("kerberos authentication refused: not a root:// credential")
}

// kerberosOnly is an authenticator taking fakeKerberos' tickets alone.
func kerberosOnly() *auth.Authenticator {
	return auth.NewAuthenticator(auth.Verifiers{Kerberos: fakeKerberos{}}, nil)
}

// loginKrb5 logs in and returns the login answer's security part.
func loginKrb5(t *testing.T, addr string) (*rawConn, string) {
	t.Helper()
	r := dialRaw(t, addr)
	r.hello()
	var pb [16]byte
	binary.BigEndian.PutUint32(pb[0:], proto.ProtocolVersion)
	r.call(proto.ReqProtocol, pb, nil)
	var lb [16]byte
	copy(lb[4:], "alice")
	st, body := r.call(proto.ReqLogin, lb, nil)
	if st != proto.StatusOK || len(body) < 16 {
		t.Fatalf("login: status %d body %q", st, body)
	}
	return r, string(body[16:])
}

func TestKrb5Login(t *testing.T) {
	addr, _ := testEnv(t, Config{Auth: kerberosOnly()})
	r, sec := loginKrb5(t, addr)
	// Plain root:// offers krb5 (no ztn: XrdCl sends tokens only over TLS).
	if sec != "&P=krb5,xrootd/box.example.org@EXAMPLE.ORG&P=unix" {
		t.Errorf("login security = %q", sec)
	}
	var ab [16]byte
	copy(ab[12:], "krb5")
	if st, body := r.call(proto.ReqAuth, ab, []byte("krb5\x00good-ticket")); st != proto.StatusOK {
		t.Errorf("a good ticket: status %d %q", st, body)
	}

	for _, c := range []struct{ name, cred, want string }{
		{"refused", "krb5\x00stale-ticket", "krb5: kerberos authentication refused: ticket expired"},
		{"no AP-REQ", "krb5\x00", "krb5: malformed credential"},
		{"other header", "ztn\x00abc", "krb5: malformed credential"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := loginKrb5(t, addr)
			st, body := r.call(proto.ReqAuth, ab, []byte(c.cred))
			if code, msg := errOf(body); st != proto.StatusError || code != proto.ErrAuthFailed || !strings.Contains(msg, c.want) {
				t.Errorf("status %d code %d %q, want kXR_AuthFailed naming %q", st, code, msg, c.want)
			}
		})
	}
}

// Without Kerberos (and without tokens) the login answer is the bare
// session id, as before.
func TestNoKrb5Login(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	if _, sec := loginKrb5(t, addr); sec != "" {
		t.Errorf("login security = %q, want none", sec)
	}
}
