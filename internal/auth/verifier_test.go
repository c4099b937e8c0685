package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"sitebox/internal/store"
)

const fileIss = "https://file.example"

// verifierFixture is a URL issuer (RSA kid a1, EC kid a2) and a file
// issuer (EC kid f1, base /store, audience https://box.example,
// authoritative for the VO cms).
type verifierFixture struct {
	v           *Verifier
	web         *testIssuer
	rsaA, other *rsa.PrivateKey
	ecA, ecF    *ecdsa.PrivateKey
}

func newFixture(t *testing.T, cfg VerifierConfig) *verifierFixture {
	t.Helper()
	tt := newTestTLS(t)
	rsaA, ecA, ecF := mustRSA(t), mustEC(t), mustEC(t)
	web := startIssuer(t, tt, nil, jwksOf(t, map[string]any{"a1": &rsaA.PublicKey, "a2": &ecA.PublicKey}))
	file := writeFile(t, "jwks.json", jwksOf(t, map[string]any{"f1": &ecF.PublicKey}))
	cfg.HTTPClient = tt.client
	cfg.Issuers = append(cfg.Issuers,
		IssuerConfig{Issuer: web.srv.URL},
		IssuerConfig{Issuer: fileIss, JWKSFile: file, BasePath: "/store", Audiences: []string{"https://box.example"}, VOs: []string{"cms"}})
	return &verifierFixture{v: newTestVerifier(t, cfg), web: web, rsaA: rsaA, ecA: ecA, ecF: ecF, other: mustRSA(t)}
}

func TestVerify(t *testing.T) {
	f := newFixture(t, VerifierConfig{})
	web := f.web.srv.URL
	now := time.Now()
	hour := now.Add(time.Hour).Unix()
	pubPEM := func() []byte {
		der, _ := x509.MarshalPKIXPublicKey(&f.rsaA.PublicKey)
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}
	tests := []struct {
		name    string
		token   func() string
		wantErr string // substring; "" means success
		want    *store.Identity
	}{
		{name: "valid RS256", token: func() string { return sign(t, "RS256", "a1", f.rsaA, claimsFor(web)) },
			want: &store.Identity{Subject: "alice", Issuer: web, Scopes: []store.Scope{{Op: "read", Path: "/cms"}}, Expires: time.Unix(hour, 0)}},
		{name: "valid ES256", token: func() string { return sign(t, "ES256", "a2", f.ecA, claimsFor(web)) },
			want: &store.Identity{Subject: "alice", Issuer: web, Scopes: []store.Scope{{Op: "read", Path: "/cms"}}, Expires: time.Unix(hour, 0)}},
		{name: "file issuer, base path, groups, compute and ignored scopes", token: func() string {
			return sign(t, "ES256", "f1", f.ecF, with(claimsFor(fileIss), "aud", []string{"x", "https://box.example"},
				"scope", "openid offline_access compute.read storage.read:/cms/ storage.create:/cms/user storage.stage storage.modify:/",
				"wlcg.groups", []string{"/cms", "/cms/prod"}, "groups", []string{"/cms", "/atlas"}))
		}, want: &store.Identity{Subject: "alice", Issuer: fileIss, Groups: []string{"/cms", "/cms/prod"}, // not /atlas: the issuer speaks only for cms
			Scopes: []store.Scope{sc("compute.read", "/store"), sc("read", "/store/cms"), sc("create", "/store/cms/user"), sc("stage", "/store"), sc("modify", "/store")}, Expires: time.Unix(hour, 0)}},
		{name: "groups of an issuer authoritative for no VO are dropped", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "scope", nil, "wlcg.groups", []string{"/cms", "/cms/prod"}))
		}, want: &store.Identity{Subject: "alice", Issuer: web, Expires: time.Unix(hour, 0)}},
		{name: "no kid, one-key set", token: func() string { return sign(t, "ES256", "", f.ecF, claimsFor(fileIss)) }},
		{name: "SciTokens 2.0 read/write", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "wlcg.ver", nil, "ver", "scitoken:2.0", "scope", "read:/data write:/data/out"))
		}, want: &store.Identity{Subject: "alice", Issuer: web, Expires: time.Unix(hour, 0),
			Scopes: []store.Scope{sc("read", "/data"), sc("create", "/data/out"), sc("modify", "/data/out")}}},
		{name: "SciTokens names ignored in WLCG token", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "scope", "read:/data"))
		}, want: &store.Identity{Subject: "alice", Issuer: web, Expires: time.Unix(hour, 0)}},
		{name: "expired within skew", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", now.Add(-30*time.Second).Unix()))
		}},
		{name: "empty", token: func() string { return "" }, wantErr: "no token"},
		{name: "expired", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", now.Add(-2*time.Hour).Unix()))
		}, wantErr: "token expired at " + now.Add(-2*time.Hour).UTC().Format("2006-01-02T15")},
		{name: "no exp", token: func() string { return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", nil)) },
			wantErr: "token has no expiry (exp)"},
		{name: "not yet valid", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "nbf", now.Add(time.Hour).Unix()))
		}, wantErr: "token not valid before "},
		{name: "iat in the future", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iat", now.Add(10*time.Minute).Unix()))
		}, wantErr: "token issued in the future"},
		{name: "wrong issuer", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iss", "https://evil.example"))
		},
			wantErr: `token issuer "https://evil.example" is not trusted`},
		{name: "issuer differs by trailing slash", token: func() string { return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iss", web+"/")) },
			wantErr: "is not trusted"},
		{name: "signed by another key", token: func() string { return sign(t, "RS256", "a1", f.other, claimsFor(web)) },
			wantErr: "token signature invalid"},
		{name: "payload swapped", token: func() string {
			a := strings.Split(sign(t, "RS256", "a1", f.rsaA, claimsFor(web)), ".")
			b := strings.Split(sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "sub", "root")), ".")
			return a[0] + "." + b[1] + "." + a[2]
		}, wantErr: "token signature invalid"},
		{name: "alg none", token: func() string { return sign(t, "none", "a1", jwt.UnsafeAllowNoneSignatureType, claimsFor(web)) },
			wantErr: `token algorithm "none" is not allowed`},
		{name: "HS256 with the public key as secret", token: func() string { return sign(t, "HS256", "a1", pubPEM(), claimsFor(web)) },
			wantErr: `token algorithm "HS256" is not allowed`},
		{name: "ES256 header on RSA key", token: func() string { return sign(t, "ES256", "a1", f.ecA, claimsFor(web)) },
			wantErr: `token algorithm ES256 does not match key "a1"`},
		{name: "no kid, two-key set", token: func() string { return sign(t, "RS256", "", f.rsaA, claimsFor(web)) },
			wantErr: "token has no key id (kid) and issuer"},
		{name: "audience of another service", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "aud", "https://other.example"))
		},
			wantErr: `token audience ["https://other.example"] is not accepted here`},
		{name: "configured audience on another issuer", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "aud", "https://box.example"))
		}, wantErr: "is not accepted here"},
		{name: "no audience", token: func() string { return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "aud", nil)) }},
		{name: "no subject", token: func() string { return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "sub", nil)) },
			wantErr: "token has no subject"},
		{name: "dot-dot in scope", token: func() string {
			return sign(t, "ES256", "f1", f.ecF, with(claimsFor(fileIss), "scope", "storage.read:/../etc"))
		}, wantErr: `token scope "storage.read:/../etc": path "/../etc" is not a clean absolute path`},
		{name: "dot in scope", token: func() string {
			return sign(t, "ES256", "f1", f.ecF, with(claimsFor(fileIss), "scope", "storage.read:/a/./b"))
		},
			wantErr: "is not a clean absolute path"},
		{name: "relative scope", token: func() string {
			return sign(t, "ES256", "f1", f.ecF, with(claimsFor(fileIss), "scope", "storage.read:cms"))
		},
			wantErr: `path "cms" is not absolute`},
		{name: "NUL in scope", token: func() string {
			return sign(t, "ES256", "f1", f.ecF, with(claimsFor(fileIss), "scope", "storage.read:/a\x00b"))
		},
			wantErr: "is not a clean absolute path"},
		{name: "not a JWT", token: func() string { return "abc" }, wantErr: "token is malformed"},
		{name: "bad base64 claims", token: func() string {
			a := strings.Split(sign(t, "RS256", "a1", f.rsaA, claimsFor(web)), ".")
			return a[0] + ".!!!." + a[2]
		}, wantErr: "token is malformed: could not base64 decode claim"},
		{name: "exp not a number", token: func() string { return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", "tomorrow")) },
			wantErr: `token claim "exp" is not a NumericDate (a JSON number of seconds): "tomorrow"`},
		// RFC 7519 NumericDate is a JSON number: a string that reads as
		// one is no date, nor is null.
		{name: "exp as a string", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", strconv.FormatInt(hour, 10)))
		}, wantErr: `token claim "exp" is not a NumericDate (a JSON number of seconds)`},
		{name: "nbf as a string", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "nbf", strconv.FormatInt(now.Unix(), 10)))
		}, wantErr: `token claim "nbf" is not a NumericDate`},
		{name: "iat as a string", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iat", strconv.FormatInt(now.Unix(), 10)))
		}, wantErr: `token claim "iat" is not a NumericDate`},
		{name: "exp null", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", json.RawMessage("null")))
		},
			wantErr: `token claim "exp" is not a NumericDate`},
		{name: "exp as a fraction", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "exp", float64(hour)+0.5))
		}},
		{name: "lifetime over the maximum", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iat", now.Unix(), "exp", now.Add(30*24*time.Hour).Unix()))
		}, wantErr: "token lifetime 720h0m0s (iat to exp) is over the 168h0m0s this box accepts"},
		{name: "no iat, valid for longer than the maximum", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iat", nil, "nbf", nil, "exp", now.Add(100*365*24*time.Hour).Unix()))
		}, wantErr: "token is valid for another 876000h0m0s, over the 168h0m0s this box accepts"},
		{name: "iat long ago, exp within the maximum from now", token: func() string {
			return sign(t, "RS256", "a1", f.rsaA, with(claimsFor(web), "iat", now.Add(-30*24*time.Hour).Unix(), "nbf", nil))
		}, wantErr: "(iat to exp) is over the"},
		{name: "1 MB", token: func() string { return strings.Repeat("A", 1<<20) },
			wantErr: "token is 1048576 bytes, over the 16384-byte limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := tc.token()
			id, err := f.v.Verify(context.Background(), tok)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if tc.want == nil {
					return
				}
				if d := id.Expires.Sub(tc.want.Expires); d < -2*time.Second || d > 2*time.Second {
					t.Errorf("expires %v, want about %v", id.Expires, tc.want.Expires)
				}
				id.Expires = tc.want.Expires // claimsFor read the clock separately
				if !reflect.DeepEqual(id, tc.want) {
					t.Fatalf("identity\n got %+v\nwant %+v", id, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify succeeded (%+v), want error %q", id, tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tc.wantErr)
			}
			if !errors.Is(err, store.ErrPermission) {
				t.Errorf("error %v does not wrap store.ErrPermission", err)
			}
			if sig := tok[strings.LastIndex(tok, ".")+1:]; len(sig) > 20 && strings.Contains(err.Error(), sig) {
				t.Errorf("error %q contains the token", err)
			}
		})
	}
}

// TestVerifyHugeTokenIsCheap checks a 1 MB token is refused before any
// decoding: well under a kilobyte allocated per call, not megabytes.
func TestVerifyHugeTokenIsCheap(t *testing.T) {
	f := newFixture(t, VerifierConfig{})
	seg := b64([]byte(`{"alg":"RS256","kid":"a1"}`))
	huge := seg + "." + strings.Repeat("eyJhIjoi", 1<<17) + ".sig"
	// Let the background key fetch finish so its allocations do not count.
	if _, err := f.v.Verify(context.Background(), sign(t, "RS256", "a1", f.rsaA, claimsFor(f.web.srv.URL))); err != nil {
		t.Fatal(err)
	}
	const runs = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range runs {
		_, err := f.v.Verify(context.Background(), huge)
		if err == nil || !strings.Contains(err.Error(), "over the 16384-byte limit") {
			t.Fatalf("huge token: %v", err)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if perCall := (after.TotalAlloc - before.TotalAlloc) / runs; perCall > 1024 {
		t.Errorf("rejecting a %d-byte token allocated %d bytes per call", len(huge), perCall)
	}
	if elapsed > time.Second {
		t.Errorf("%d rejections took %v", runs, elapsed)
	}
}

func TestNewVerifierConfig(t *testing.T) {
	good := writeFile(t, "good.json", jwksOf(t, map[string]any{"k": &mustEC(t).PublicKey}))
	bad := writeFile(t, "bad.json", []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`))
	tests := []struct {
		name    string
		issuers []IssuerConfig
		wantErr string
	}{
		{"ok", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: good}}, ""},
		{"none", nil, "no issuers configured"},
		{"http issuer", []IssuerConfig{{Issuer: "http://a.example", JWKSFile: good}}, "must be an https:// URL"},
		{"twice", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: good}, {Issuer: "https://a.example", JWKSFile: good}}, "configured twice"},
		{"file and url", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: good, JWKSURL: "https://a.example/k"}}, "not both"},
		{"http jwks url", []IssuerConfig{{Issuer: "https://a.example", JWKSURL: "http://a.example/k"}}, "is not https"},
		{"bad base", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: good, BasePath: "/store/"}}, "base path"},
		{"missing file", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: good + ".nope"}}, "read JWKS file"},
		{"only symmetric keys", []IssuerConfig{{Issuer: "https://a.example", JWKSFile: bad}}, `key type "oct" is not supported`},
		{"unreachable URL issuer is fine", []IssuerConfig{{Issuer: "https://127.0.0.1:1"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := NewVerifier(VerifierConfig{Issuers: tc.issuers}, nil)
			if v != nil {
				defer v.Close()
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("NewVerifier: %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func sc(op, path string) store.Scope { return store.Scope{Op: op, Path: path} }
