package auth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/store"
)

func TestGenerateKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "issuer")
	p, err := GenerateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 || p != filepath.Join(dir, KeyFileName) {
		t.Fatalf("key %s: %v, mode %v", p, err, fi.Mode())
	}
	first, _ := os.ReadFile(p)
	if _, err := GenerateKey(dir); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second GenerateKey: %v", err)
	}
	if again, _ := os.ReadFile(p); string(again) != string(first) {
		t.Fatal("refused GenerateKey changed the key")
	}
	if _, err := GenerateKeyForce(dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(p); string(again) == string(first) {
		t.Fatal("GenerateKeyForce kept the old key")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("leftover files in %s: %v", dir, entries)
	}
	if _, err := LoadIssuer(p, "https://site.example/"); err != nil {
		t.Fatal(err)
	}
}

func TestLoadIssuerErrors(t *testing.T) {
	dir := t.TempDir()
	key, err := GenerateKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	open := writeFile(t, "open.key", mustRead(t, key))
	os.Chmod(open, 0o644)
	notKey := writeFile(t, "x.key", []byte("hello"))
	for _, tc := range []struct{ name, file, url, wantErr string }{
		{"http URL", key, "http://site.example", "must be an https:// URL"},
		{"query in URL", key, "https://site.example?x=1", "must be an https:// URL"},
		{"missing", key + ".nope", "https://site.example", "no such file"},
		{"world-readable", open, "https://site.example", "readable by others"},
		{"not PEM", notKey, "https://site.example", "no PEM block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := LoadIssuer(tc.file, tc.url); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("LoadIssuer: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testIssuerKey(t *testing.T, url string) *Issuer {
	t.Helper()
	p, err := GenerateKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	is, err := LoadIssuer(p, url)
	if err != nil {
		t.Fatal(err)
	}
	return is
}

func TestIssueValidation(t *testing.T) {
	is := testIssuerKey(t, "https://site.example")
	ok := TokenRequest{Subject: "alice", Lifetime: time.Hour, Scopes: []string{"storage.read:/store", "storage.stage"}}
	tests := []struct {
		name    string
		edit    func(r *TokenRequest)
		wantErr string
	}{
		{"ok", func(r *TokenRequest) {}, ""},
		{"no subject", func(r *TokenRequest) { r.Subject = "" }, "subject"},
		{"zero lifetime", func(r *TokenRequest) { r.Lifetime = 0 }, "lifetime 0s must be over 0"},
		{"too long", func(r *TokenRequest) { r.Lifetime = 8 * 24 * time.Hour }, "at most 168h0m0s"},
		{"unknown scope", func(r *TokenRequest) { r.Scopes = []string{"storage.write:/x"} }, `scope "storage.write:/x": want storage.read`},
		{"SciTokens scope", func(r *TokenRequest) { r.Scopes = []string{"read:/x"} }, `scope "read:/x"`},
		{"dot-dot scope", func(r *TokenRequest) { r.Scopes = []string{"storage.read:/store/../etc"} }, "not a clean absolute path"},
		{"relative scope", func(r *TokenRequest) { r.Scopes = []string{"storage.read:store"} }, "is not absolute"},
		{"bad group", func(r *TokenRequest) { r.Groups = []string{"cms"} }, `group "cms" must look like /vo`},
		{"empty audience", func(r *TokenRequest) { r.Audience = []string{""} }, "bad audience"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			tc.edit(&r)
			_, err := is.Issue(r)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Issue: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestIssueVerifyRoundTrip serves the issuer's own Handler (discovery and
// JWKS) over TLS, at an issuer URL with a path, and verifies its tokens
// with a Verifier that discovers the keys there.
func TestIssueVerifyRoundTrip(t *testing.T) {
	tt := newTestTLS(t)
	var h atomic.Pointer[http.Handler] // the issuer's Handler, once its URL (the server's) is known
	notFound := http.NotFoundHandler()
	h.Store(&notFound)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	srv.TLS = tt.server.Clone()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	iss := testIssuerKey(t, srv.URL+"/site")
	ih := iss.Handler()
	h.Store(&ih)

	v := newTestVerifier(t, VerifierConfig{HTTPClient: tt.client, Issuers: []IssuerConfig{
		{Issuer: iss.URL(), BasePath: "/store", Audiences: []string{"https://box.example"}, VOs: []string{"cms"}},
	}})
	tests := []struct {
		name string
		req  TokenRequest
		want *store.Identity
	}{
		{"scopes and groups", TokenRequest{Subject: "alice", Groups: []string{"/cms", "/cms/prod"}, Lifetime: time.Hour,
			Scopes: []string{"storage.read:/cms", "storage.create:/cms/user/alice", "storage.modify:/cms/user/alice/tmp"}},
			&store.Identity{Subject: "alice", Issuer: iss.URL(), Groups: []string{"/cms", "/cms/prod"},
				Scopes: []store.Scope{sc("read", "/store/cms"), sc("create", "/store/cms/user/alice"), sc("modify", "/store/cms/user/alice/tmp")}}},
		{"two audiences, no scopes", TokenRequest{Subject: "bob", Lifetime: time.Minute, Audience: []string{"https://box.example", "https://other.example"}},
			&store.Identity{Subject: "bob", Issuer: iss.URL()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := iss.Issue(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			id, err := v.Verify(context.Background(), tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if d := time.Until(id.Expires) - tc.req.Lifetime; d > time.Second || d < -2*time.Second {
				t.Errorf("expires %v, want about now + %v", id.Expires, tc.req.Lifetime)
			}
			id.Expires = time.Time{}
			if !reflect.DeepEqual(id, tc.want) {
				t.Errorf("identity\n got %+v\nwant %+v", id, tc.want)
			}
			// The WLCG profile header and claims.
			parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
			if err != nil {
				t.Fatal(err)
			}
			c := parsed.Claims.(jwt.MapClaims)
			if parsed.Header["kid"] != iss.KeyID() || parsed.Header["typ"] != "JWT" || parsed.Header["alg"] != "ES256" {
				t.Errorf("header %v", parsed.Header)
			}
			if c["wlcg.ver"] != "1.0" || c["jti"] == "" || c["iat"] == nil || c["nbf"] == nil {
				t.Errorf("claims %v", c)
			}
		})
	}
	if got := v.issuers[iss.URL()]; got == nil || len(got.keys) != 1 || got.keys[0].kid != iss.KeyID() {
		t.Errorf("verifier did not load the issuer's key")
	}
}

func TestIssuerHandler(t *testing.T) {
	iss := testIssuerKey(t, "https://site.example")
	srv := httptest.NewServer(iss.Handler())
	t.Cleanup(srv.Close)
	get := func(method, path string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	code, hdr, body := get("GET", DiscoveryPath)
	var disc map[string]any
	if code != 200 || hdr.Get("Content-Type") != "application/json" || json.Unmarshal(body, &disc) != nil {
		t.Fatalf("discovery: %d %s", code, body)
	}
	if disc["issuer"] != "https://site.example" || disc["jwks_uri"] != "https://site.example/.well-known/jwks.json" ||
		!strings.Contains(string(body), `"ES256"`) || !strings.Contains(string(body), `"storage.read"`) {
		t.Errorf("discovery %s", body)
	}
	code, _, body = get("GET", JWKSPath)
	keys, err := parseJWKS(body)
	if code != 200 || err != nil || len(keys) != 1 || keys[0].kid != iss.KeyID() || string(body) != string(iss.JWKS()) {
		t.Errorf("jwks: %d %s %v", code, body, err)
	}
	for _, tc := range []struct {
		method, path string
		want         int
	}{{"HEAD", JWKSPath, 200}, {"POST", JWKSPath, 405}, {"GET", "/.well-known/other", 404}, {"GET", "/", 404}} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			if code, _, _ := get(tc.method, tc.path); code != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, code, tc.want)
			}
		})
	}
}

// TestThumbprint checks the kid is the RFC 7638 thumbprint, recomputed
// here from the JWKS by a different route (canonical JSON via a map).
func TestThumbprint(t *testing.T) {
	iss := testIssuerKey(t, "https://site.example")
	var set struct{ Keys []map[string]string }
	if err := json.Unmarshal(iss.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	k := set.Keys[0]
	canon, _ := json.Marshal(map[string]string{"crv": k["crv"], "kty": k["kty"], "x": k["x"], "y": k["y"]}) // sorted keys
	want := b64(sha256Sum(canon))
	if iss.KeyID() != want || k["kid"] != want {
		t.Errorf("kid %s, JWKS kid %s, want %s", iss.KeyID(), k["kid"], want)
	}
}
