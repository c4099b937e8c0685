package webdav

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// fakeNegotiate accepts the SPNEGO token "alice-ticket" as alice (and
// no AP-REQ: root:// is not served here).
type fakeNegotiate struct{}

func (fakeNegotiate) Principal(string) string { return "" }

func (fakeNegotiate) VerifyAPReq([]byte, string) (*store.Identity, error) {
	return nil, errors.New("kerberos authentication refused: not an HTTP credential")
}

func (fakeNegotiate) VerifyNegotiate(tok string) (*store.Identity, error) {
	if tok != "alice-ticket" {
		return nil, errors.New("kerberos authentication refused: ticket expired")
	}
	return &store.Identity{Subject: "alice", Issuer: "krb5:EXAMPLE.ORG", Scopes: []store.Scope{{Op: store.ScopeRead, Path: "/store"}}}, nil
}

// Negotiate reads where the Kerberos user's scopes allow; a request with
// no credentials is challenged with Negotiate and Bearer; a refused
// ticket is answered with its reason.
func TestNegotiate(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadToken, Write: auth.WriteToken}})
	srv := httptest.NewServer(New(Config{Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: fakeTokens{}, Kerberos: fakeNegotiate{}}, nil)}, auth.NewGuard(o, p, nil), nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	writeFile(t, dir, "f", []byte("data"))

	get := func(authz string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+"/store/f", nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := get("Negotiate alice-ticket"); resp.StatusCode != 200 || body != "data" {
		t.Errorf("Negotiate read: %d %q", resp.StatusCode, body)
	}
	resp, _ := get("")
	if ch := resp.Header.Values("WWW-Authenticate"); resp.StatusCode != 401 || len(ch) != 2 || !strings.HasPrefix(ch[0], "Bearer") || ch[1] != "Negotiate" {
		t.Errorf("anonymous: %d %q, want 401 with Bearer and Negotiate", resp.StatusCode, ch)
	}
	if resp, body := get("Negotiate stale"); resp.StatusCode != 401 || !strings.Contains(body, "ticket expired") {
		t.Errorf("refused ticket: %d %q", resp.StatusCode, body)
	}
}

// The access log says how each client proved who it is: a Kerberos
// user's line says krb5, a token holder's token, an anonymous client's
// nothing.
func TestAccessLogNamesTheMethod(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := auth.NewPolicy([]auth.Namespace{{Prefix: "/store", Read: auth.ReadToken, Write: auth.WriteToken}})
	var mu sync.Mutex
	var got []accesslog.Entry
	sink := accesslog.SinkFunc(func(e accesslog.Entry) { mu.Lock(); got = append(got, e); mu.Unlock() })
	authn := auth.NewAuthenticator(auth.Verifiers{Tokens: fakeTokens{}, Kerberos: fakeNegotiate{}}, nil)
	srv := httptest.NewServer(New(Config{Auth: authn, AccessLog: sink}, auth.NewGuard(o, p, nil), nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	writeFile(t, dir, "f", []byte("data"))
	for _, authz := range []string{"Negotiate alice-ticket", "Bearer good-bob", ""} {
		req, _ := http.NewRequest("GET", srv.URL+"/store/f", nil)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	want := map[string]string{"alice": auth.MethodKrb5, "bob": auth.MethodToken, "": ""}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("access log entries %+v, want %d", got, len(want))
	}
	for _, e := range got {
		if m, ok := want[e.Subject]; !ok || e.Auth != m {
			t.Errorf("entry of %q says auth %q, want %q", e.Subject, e.Auth, m)
		}
	}
}
