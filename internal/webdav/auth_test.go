package webdav

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"sitebox/internal/auth"
	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// fakeTokens accepts "good-<sub>" with a create scope on /store.
type fakeTokens struct{}

func (fakeTokens) Verify(_ context.Context, raw string) (*store.Identity, error) {
	if sub, ok := strings.CutPrefix(raw, "good-"); ok {
		return &store.Identity{Subject: sub, Scopes: []store.Scope{{Op: store.ScopeRead, Path: "/store"}, {Op: store.ScopeCreate, Path: "/store"}}}, nil
	}
	return nil, &auth.Denied{Reason: "token signature invalid"}
}

// guarded serves /store through the auth guard with a token-only
// namespace and an integrity one, over plain HTTP (or TLS).
func guarded(t *testing.T, tls bool) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := auth.NewPolicy([]auth.Namespace{
		{Prefix: "/store/tok", Read: auth.ReadToken, Write: auth.WriteToken},
		{Prefix: "/store/integ", Read: auth.ReadPublic, Write: auth.WriteToken, Protection: auth.LevelIntegrity},
		{Prefix: "/store/secret", Read: auth.ReadPublic, Protection: auth.LevelPrivacy},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := New(Config{Auth: auth.NewAuthenticator(auth.Verifiers{Tokens: fakeTokens{}}, nil)}, auth.NewGuard(o, p, nil), nil)
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(func() { srv.Close(); o.Close() })
	for _, f := range []string{"tok/f", "integ/f", "secret/f"} {
		writeFile(t, dir, f, []byte("data"))
	}
	return srv, dir
}

func TestTokensAndProtection(t *testing.T) {
	srv, dir := guarded(t, false)
	for _, c := range []struct {
		name, method, path, token string
		want                      int
		challenge                 bool
		why                       string
	}{
		{"no token", "GET", "/store/tok/f", "", 401, true, "no token"},
		{"refused token", "GET", "/store/tok/f", "forged", 401, true, "signature invalid"},
		{"token in authz=", "GET", "/store/tok/f?authz=Bearer%20good-a", "", 200, false, ""},
		{"bearer header", "GET", "/store/tok/f", "good-a", 200, false, ""},
		{"integrity over plain HTTP", "GET", "/store/integ/f", "", 403, false, "use https://"},
		{"integrity HEAD is metadata", "HEAD", "/store/integ/f", "", 200, false, ""},
		{"privacy over plain HTTP", "GET", "/store/secret/f", "", 403, false, "requires TLS"},
		{"integrity upload over plain HTTP", "PUT", "/store/integ/up", "good-a", 403, false, "use https://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hdr []string
			if c.token != "" {
				hdr = []string{"Authorization", "Bearer " + c.token}
			}
			var body *strings.Reader
			if c.method == "PUT" {
				body = strings.NewReader("upload")
			}
			var resp *http.Response
			var text string
			if body != nil {
				resp, text = do(t, c.method, srv.URL+c.path, body, hdr...)
			} else {
				resp, text = do(t, c.method, srv.URL+c.path, nil, hdr...)
			}
			if resp.StatusCode != c.want || !strings.Contains(text, c.why) {
				t.Errorf("%d %q, want %d naming %q", resp.StatusCode, text, c.want, c.why)
			}
			if got := resp.Header.Get("WWW-Authenticate") != ""; got != c.challenge {
				t.Errorf("WWW-Authenticate present %v, want %v", got, c.challenge)
			}
		})
	}
	// The refused upload left nothing: no file, no temporary.
	ents, _ := os.ReadDir(dir + "/integ")
	for _, e := range ents {
		if e.Name() != "f" {
			t.Errorf("refused upload left %s", e.Name())
		}
	}
	if _, err := os.Stat(dir + "/integ/up"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused upload: %v", err)
	}
}

// Over TLS the integrity namespace serves and takes files.
func TestIntegrityOverTLS(t *testing.T) {
	srv, dir := guarded(t, true)
	c := srv.Client()
	req, _ := http.NewRequest("PUT", srv.URL+"/store/integ/up", strings.NewReader("upload"))
	req.Header.Set("Authorization", "Bearer good-a")
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("PUT over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
	if b, _ := os.ReadFile(dir + "/integ/up"); string(b) != "upload" {
		t.Errorf("uploaded %q", b)
	}
	resp, err = c.Get(srv.URL + "/store/integ/f")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
}
