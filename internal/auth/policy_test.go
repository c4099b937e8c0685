package auth

import (
	"errors"
	"strings"
	"testing"

	"sitebox/internal/store"
)

func testPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := NewPolicy([]Namespace{
		{Prefix: "/store/cms", Read: ReadVO, VOs: []string{"cms"}, Write: WriteToken},
		{Prefix: "/pub", Read: ReadPublic, Write: WriteNone},
		{Prefix: "/store/secret", Read: ReadToken, Protection: LevelPrivacy},
		{Prefix: "/store/user", Read: ReadToken, Write: WriteToken},
		{Prefix: "/store/integ", Read: ReadPublic, Protection: LevelIntegrity},
		{Prefix: "/store/atlas", Read: ReadToken, VOs: []string{"atlas"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ident builds an identity from groups and "op:/path" scopes.
func ident(groups []string, scopes ...string) *store.Identity {
	id := &store.Identity{Subject: "alice", Issuer: "https://iss.example", Groups: groups}
	for _, s := range scopes {
		op, p, _ := strings.Cut(s, ":")
		id.Scopes = append(id.Scopes, store.Scope{Op: op, Path: p})
	}
	return id
}

func TestPolicyCheck(t *testing.T) {
	p := testPolicy(t)
	cms := []string{"/cms/prod"}
	tests := []struct {
		name    string
		req     *store.Request
		op      string
		path    string
		wantErr string
	}{
		{"vo read anonymous", &store.Request{}, "read", "/store/cms/f", "no token: /store/cms/f requires a bearer token (read)"},
		{"vo read, ?vo= is not proof", &store.Request{VO: "cms"}, "read", "/store/cms/f", "no token"},
		{"vo read other VO", &store.Request{Identity: ident([]string{"/atlas"})}, "read", "/store/cms/f", "VO atlas may not read /store/cms/f (allowed: cms)"},
		{"vo read other VO with ?vo=cms", &store.Request{VO: "cms", Identity: ident([]string{"/atlas"})}, "read", "/store/cms/f", "VO atlas may not read"},
		{"vo read no groups", &store.Request{Identity: ident(nil, "read:/store/cms")}, "read", "/store/cms/f", "token has no VO groups: cms may read /store/cms/f"},
		{"vo read groups grant", &store.Request{Identity: ident(cms)}, "read", "/store/cms/f", ""},
		{"vo read scopes narrow", &store.Request{Identity: ident(cms, "read:/store/cms/a")}, "read", "/store/cms/b", "token has no storage.read scope for /store/cms/b (it has /store/cms/a)"},
		{"vo read scopes cover", &store.Request{Identity: ident(cms, "read:/store/cms/a")}, "read", "/store/cms/a/x", ""},
		{"vo read with only write scopes", &store.Request{Identity: ident(cms, "create:/store/cms")}, "read", "/store/cms/x", "token has no storage.read scope for /store/cms/x (it has none)"},
		{"vo write needs scope", &store.Request{Identity: ident(cms)}, "create", "/store/cms/f", "token has no storage.create scope for /store/cms/f (it has none)"},
		{"vo write other VO", &store.Request{Identity: ident([]string{"/atlas"}, "create:/store/cms")}, "create", "/store/cms/f", "VO atlas may not write /store/cms/f (allowed: cms)"},
		{"vo write ok", &store.Request{Identity: ident(cms, "create:/store/cms")}, "create", "/store/cms/f", ""},
		{"public read anonymous", &store.Request{}, "read", "/pub/x", ""},
		{"read-only namespace", &store.Request{Identity: ident(nil, "modify:/")}, "modify", "/pub/x", "/pub is read-only"},
		{"read-only namespace create", &store.Request{Identity: ident(nil, "create:/")}, "create", "/pub", "/pub is read-only"},
		{"privacy without TLS", &store.Request{Identity: ident(nil, "read:/store/secret")}, "read", "/store/secret/f", "/store/secret requires TLS (privacy): use roots:// or https://"},
		{"privacy with TLS", &store.Request{TLS: true, Identity: ident(nil, "read:/store/secret")}, "read", "/store/secret/f", ""},
		{"integrity is the frontend's job", &store.Request{}, "read", "/store/integ/f", ""},
		{"token read anonymous", &store.Request{}, "read", "/store/user/a", "no token: /store/user/a requires a bearer token (read)"},
		{"scope /a on /ab", &store.Request{Identity: ident(nil, "read:/store/user/a")}, "read", "/store/user/ab", "token has no storage.read scope for /store/user/ab (it has /store/user/a)"},
		{"scope /a on /a/b", &store.Request{Identity: ident(nil, "read:/store/user/a")}, "read", "/store/user/a/b", ""},
		{"read scope used for a write", &store.Request{Identity: ident(nil, "read:/store/user")}, "create", "/store/user/f", "read scope used for a write: no storage.create scope for /store/user/f"},
		{"modify grants create", &store.Request{Identity: ident(nil, "modify:/store/user")}, "create", "/store/user/f", ""},
		{"create does not grant modify", &store.Request{Identity: ident(nil, "create:/store/user/x")}, "modify", "/store/user/x/f", "token has no storage.modify scope for /store/user/x/f (its storage.create scope allows only new files"},
		{"stage does not grant read", &store.Request{Identity: ident(nil, "stage:/store/user")}, "read", "/store/user/f", "no storage.read scope"},
		{"write anonymous", &store.Request{}, "modify", "/store/user/f", "no token: /store/user/f requires a bearer token (modify)"},
		{"token read plus VO", &store.Request{Identity: ident([]string{"/cms"}, "read:/store/atlas")}, "read", "/store/atlas/f", "VO cms may not read /store/atlas/f (allowed: atlas)"},
		{"token read plus VO ok", &store.Request{Identity: ident([]string{"/atlas"}, "read:/store/atlas")}, "read", "/store/atlas/f", ""},
		{"refused token on a public path", &store.Request{AuthError: deny("token expired at 2026-01-01T00:00:00Z")}, "read", "/pub/f", "token expired at 2026-01-01T00:00:00Z"},
		{"refused token where a token is needed", &store.Request{AuthError: deny("token signature invalid")}, "create", "/store/user/f", "token signature invalid"},
		{"outside: read public", &store.Request{}, "read", "/other/f", ""},
		{"outside: parent of namespaces", &store.Request{}, "read", "/store", ""},
		{"outside: write needs token", &store.Request{}, "create", "/other/f", "no token: /other/f requires a bearer token (create)"},
		{"outside: write with scope", &store.Request{Identity: ident(nil, "create:/other")}, "create", "/other/f", ""},
		{"outside: write without scope", &store.Request{Identity: ident(nil, "create:/else")}, "create", "/other/f", "token has no storage.create scope for /other/f (it has /else)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Check(tc.req, tc.op, tc.path)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr && !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Check: %v, want %q", err, tc.wantErr)
			}
			if !errors.Is(err, store.ErrPermission) {
				t.Errorf("%v does not wrap ErrPermission", err)
			}
			// Frontends hint at how to send a token on exactly these.
			if noTok := strings.HasPrefix(err.Error(), "no token"); errors.Is(err, store.ErrNoToken) != noTok {
				t.Errorf("%v: wraps ErrNoToken %v, want %v", err, !noTok, noTok)
			}
		})
	}
}

func TestPolicyEmptyAllowsAll(t *testing.T) {
	for _, p := range []*Policy{nil, mustPolicy(t, nil)} {
		for _, op := range []string{store.ScopeRead, store.ScopeCreate, store.ScopeModify} {
			if err := p.Check(&store.Request{}, op, "/anything"); err != nil {
				t.Errorf("empty policy, %s: %v", op, err)
			}
		}
		if l := p.Protection("/x"); l != LevelNone {
			t.Errorf("empty policy protection %v", l)
		}
	}
}

func mustPolicy(t *testing.T, ns []Namespace) *Policy {
	t.Helper()
	p, err := NewPolicy(ns)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPolicyProtection(t *testing.T) {
	p := testPolicy(t)
	for path, want := range map[string]Level{
		"/store/secret": LevelPrivacy, "/store/secret/a/b": LevelPrivacy, "/store/secretx": LevelNone,
		"/store/integ/f": LevelIntegrity, "/": LevelNone, "/pub": LevelNone,
	} {
		t.Run(path, func(t *testing.T) {
			if got := p.Protection(path); got != want {
				t.Errorf("Protection(%s) = %v, want %v", path, got, want)
			}
		})
	}
}

func TestPolicyLongestPrefixWins(t *testing.T) {
	p := mustPolicy(t, []Namespace{
		{Prefix: "/store", Read: ReadToken},
		{Prefix: "/store/open", Read: ReadPublic},
	})
	if err := p.Check(&store.Request{}, "read", "/store/open/f"); err != nil {
		t.Errorf("/store/open/f: %v", err)
	}
	if err := p.Check(&store.Request{}, "read", "/store/opened"); err == nil {
		t.Error("/store/opened readable without a token")
	}
}

func TestNewPolicyValidation(t *testing.T) {
	tests := []struct {
		name    string
		ns      Namespace
		wantErr string
	}{
		{"defaults", Namespace{Prefix: "/a"}, ""},
		{"relative prefix", Namespace{Prefix: "store"}, "must be a clean absolute path"},
		{"trailing slash", Namespace{Prefix: "/store/"}, "must be a clean absolute path"},
		{"dot-dot", Namespace{Prefix: "/a/../b"}, "must be a clean absolute path"},
		{"bad read", Namespace{Prefix: "/a", Read: "everyone"}, `read "everyone": want public, token or vo`},
		{"bad write", Namespace{Prefix: "/a", Write: "anyone"}, `write "anyone": want none or token`},
		{"vo without VOs", Namespace{Prefix: "/a", Read: ReadVO}, "read = vo needs a VO list"},
		{"bad VO", Namespace{Prefix: "/a", Read: ReadVO, VOs: []string{"/cms"}}, `bad VO name "/cms"`},
		{"bad level", Namespace{Prefix: "/a", Protection: 7}, "bad protection Level(7)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPolicy([]Namespace{tc.ns})
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("NewPolicy: %v, want %q", err, tc.wantErr)
			}
		})
	}
	if _, err := NewPolicy([]Namespace{{Prefix: "/a"}, {Prefix: "/a"}}); err == nil || !strings.Contains(err.Error(), "configured twice") {
		t.Errorf("duplicate prefix: %v", err)
	}
}

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Level
		ok   bool
	}{{"", LevelNone, true}, {"none", LevelNone, true}, {"Integrity", LevelIntegrity, true}, {" privacy ", LevelPrivacy, true}, {"secret", 0, false}} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseLevel(tc.in)
			if got != tc.want || (err == nil) != tc.ok {
				t.Fatalf("ParseLevel(%q) = %v, %v", tc.in, got, err)
			}
			if tc.ok && tc.in != "" {
				if back, _ := ParseLevel(got.String()); back != got {
					t.Errorf("String round trip: %v", got)
				}
			}
		})
	}
}

// TestScopesStayUnderBasePath: whatever a scope's path says, what it
// grants is the issuer's base path or below it.
func TestScopesStayUnderBasePath(t *testing.T) {
	tests := []struct {
		name, base, scope string
		want              string // "" means the token is refused
	}{
		{"root scope is the base", "/store/cms", "/", "/store/cms"},
		{"sub path", "/store/cms", "/user/alice", "/store/cms/user/alice"},
		{"one trailing slash", "/store/cms", "/user/", "/store/cms/user"},
		{"dot-dot", "/store/cms", "/../x", ""},
		{"dot-dot inside", "/store/cms", "/a/../../x", ""},
		{"only dot-dot", "/store/cms", "/..", ""},
		{"dot", "/store/cms", "/./x", ""},
		{"double slash", "/store/cms", "//x", ""},
		{"two trailing slashes", "/store/cms", "/x//", ""},
		{"relative", "/store/cms", "x", ""},
		{"empty", "/store/cms", "", ""},
		{"backslash dot-dot is a name", "/store/cms", `/..\x`, `/store/cms/..\x`},
		{"percent-encoded dot-dot is a name, not a step up", "/store/cms", "/%2e%2e/x", "/store/cms/%2e%2e/x"},
		{"NUL", "/store/cms", "/a\x00/../x", ""},
		{"newline", "/store/cms", "/a\n", ""},
		{"base / keeps the path", "/", "/store", "/store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := joinScopePath(tc.base, tc.scope)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("joinScopePath(%q, %q) = %q, want a refusal", tc.base, tc.scope, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("joinScopePath(%q, %q) = %q, %v; want %q", tc.base, tc.scope, got, err, tc.want)
			}
			if !store.HasPrefix(got, tc.base) {
				t.Errorf("%q is outside the base %q", got, tc.base)
			}
			// And a path just beside the base is never covered.
			id := &store.Identity{Scopes: []store.Scope{{Op: store.ScopeRead, Path: got}}}
			if tc.base != "/" && id.Allows(store.ScopeRead, tc.base+"x") {
				t.Errorf("scope %q covers %sx", got, tc.base)
			}
		})
	}
}

// TestPolicyCopyPeer: the local end of a third-party copy in a privacy
// or integrity namespace is refused when the other server is reached
// unencrypted — whichever way the data goes, and over a client
// connection with TLS — naming the server; over TLS it is judged as any
// call. Unprotected namespaces do not care.
func TestPolicyCopyPeer(t *testing.T) {
	p := testPolicy(t)
	user := ident(nil, "read:/", "create:/", "modify:/")
	plain := &store.CopyPeer{URL: "http://other.example:8080/data/f"}
	secure := &store.CopyPeer{URL: "https://other.example/data/f", TLS: true}
	tests := []struct {
		name string
		peer *store.CopyPeer
		path string
		ok   bool
	}{
		{"privacy, plain peer", plain, "/store/secret/f", false},
		{"privacy, root:// peer", &store.CopyPeer{URL: "root://other.example:1094//f"}, "/store/secret/f", false},
		{"privacy, TLS peer", secure, "/store/secret/f", true},
		{"integrity, plain peer", plain, "/store/integ/f", false},
		{"integrity, TLS peer", secure, "/store/integ/f", true},
		{"none, plain peer", plain, "/store/user/f", true},
		{"privacy, no copy", nil, "/store/secret/f", true},
	}
	for _, tc := range tests {
		for _, op := range []string{store.ScopeRead, store.ScopeCreate} {
			t.Run(tc.name+" "+op, func(t *testing.T) {
				err := p.Check(&store.Request{Identity: user, TLS: true, CopyPeer: tc.peer}, op, tc.path)
				if (err == nil) != tc.ok {
					t.Fatalf("Check: %v, want ok=%v", err, tc.ok)
				}
				if err != nil && (!errors.Is(err, store.ErrInsecure) || !strings.Contains(err.Error(), tc.peer.URL) || !strings.Contains(err.Error(), "https:// or roots://")) {
					t.Errorf("refusal %q: want ErrInsecure naming %s and the way out", err, tc.peer.URL)
				}
			})
		}
	}
}

// Identities the site maps (X.509, Kerberos) hold scopes as grants beside
// their groups: a VO read needs the VO only. Refusals of an X.509
// identity speak of its certificate, not of a token.
func TestPolicyMappedIdentities(t *testing.T) {
	p := testPolicy(t)
	x509 := func(groups []string, scopes ...string) *store.Identity {
		id := ident(groups, scopes...)
		id.Method, id.Issuer, id.Subject = MethodX509, "x509:/DC=org/CN=CA", "/DC=org/CN=Alice"
		return id
	}
	ignoredAC := x509(nil)
	ignoredAC.Ignored = []string{"VOMS attributes not accepted: AC 0 expired"}
	krb := ident([]string{"/cms"}, "compute.create:")
	krb.Method, krb.Issuer = MethodKrb5, "krb5:EXAMPLE.ORG"
	for _, c := range []struct {
		name, op, path string
		id             *store.Identity
		want           string
	}{
		{"x509 VO read with unrelated scopes", "read", "/store/cms/f", x509([]string{"/cms"}, "create:/store/user/alice", "compute.create:"), ""},
		{"kerberos VO read with a compute scope", "read", "/store/cms/f", krb, ""},
		{"x509 without VOMS on a VO path", "read", "/store/cms/f", x509(nil),
			"certificate of /DC=org/CN=Alice has no VOMS attributes of cms, which alone may read /store/cms/f (a VOMS proxy is needed: voms-proxy-init --voms cms"},
		{"x509 whose VOMS attributes were not accepted", "read", "/store/cms/f", ignoredAC,
			"certificate of /DC=org/CN=Alice has no VOMS attributes of cms, which alone may read /store/cms/f: VOMS attributes not accepted: AC 0 expired"},
		{"x509 of another VO", "read", "/store/cms/f", x509([]string{"/atlas"}), "VO atlas may not read /store/cms/f (allowed: cms)"},
		{"x509 write without a mapping", "create", "/store/user/f", x509([]string{"/cms"}),
			"no [auth.x509] mapping gives /DC=org/CN=Alice the storage.create scope for /store/user/f (it has none; a limited proxy has read scopes only)"},
		{"x509 write with a mapping", "create", "/store/user/alice/f", x509(nil, "create:/store/user/alice"), ""},
		{"a token's scopes still narrow", "read", "/store/cms/b", ident([]string{"/cms"}, "read:/store/cms/a"), "token has no storage.read scope"},
	} {
		err := p.Check(&store.Request{Identity: c.id}, c.op, c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
