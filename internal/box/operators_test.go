package box

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/web"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// siteIssuerBox is a box that is its own issuer, trusting its groups for
// cms only, with "ops" of its site issuer as the dashboard operator.
func siteIssuerBox(t *testing.T) *Box {
	t.Helper()
	state := t.TempDir()
	if _, err := auth.GenerateKey(filepath.Join(state, IssuerDir)); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
		Server:  config.Server{StateDir: state},
		Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:   webdav.Settings{Addr: "127.0.0.1:0"},
		Auth: auth.Settings{SiteIssuer: true, IssuerURL: "https://box.example:8443", SiteIssuerVOs: []string{"cms"},
			Operators: []auth.OperatorEntry{{Subject: "ops"}}},
	}
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func (b *Box) mint(t *testing.T, sub string, groups ...string) string {
	t.Helper()
	tok, err := b.issuer.Issue(auth.TokenRequest{Subject: sub, Groups: groups, Lifetime: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// The site issuer's groups count only for site_issuer_vos.
func TestSiteIssuerAssertsOnlyItsVOs(t *testing.T) {
	b := siteIssuerBox(t)
	id, err := b.tokens.Verify(context.Background(), b.mint(t, "alice", "/cms", "/cms/prod", "/atlas"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/cms", "/cms/prod"}; !reflect.DeepEqual(id.Groups, want) {
		t.Errorf("groups %v; want %v", id.Groups, want)
	}
}

// Only an [[auth.operator]]'s token sees the dashboard's names; anything
// else is anonymous or refused with the reason.
func TestDashboardOperator(t *testing.T) {
	b := siteIssuerBox(t)
	v := b.dashboardViewer()
	tests := []struct {
		name, auth, who, err string
		notOperator          bool
	}{
		{"no token", "", "", "", false},
		{"operator", "Bearer " + b.mint(t, "ops"), "ops (https://box.example:8443)", "", false},
		{"another subject", "Bearer " + b.mint(t, "alice", "/cms"), "", `subject "alice" of issuer https://box.example:8443 is not listed`, true},
		{"not a token", "Bearer abc", "", "token is malformed", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", web.SnapshotPath, nil)
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			who, err := v.Operator(r)
			if who != tc.who {
				t.Errorf("operator %q; want %q", who, tc.who)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v; want one naming %q", err, tc.err)
			}
			if errors.Is(err, web.ErrNotOperator) != tc.notOperator {
				t.Errorf("error %v: ErrNotOperator %v, want %v", err, !tc.notOperator, tc.notOperator)
			}
		})
	}
}

// A valid token of a user who is no operator gets the anonymous
// dashboard view, with the reason, not a refusal; a bad token is 401.
func TestDashboardNonOperatorSeesAnonymousView(t *testing.T) {
	b := siteIssuerBox(t)
	src := web.SourceFunc(func() web.Snapshot {
		return web.Snapshot{Transfers: web.Transfers{Files: []web.Top{{Name: "/store/thesis.root", Bytes: 1}}}}
	})
	h := web.Handler(src, nil, b.dashboardViewer())
	for _, tc := range []struct {
		name, token string
		code        int
		has, lacks  string
	}{
		{"user", b.mint(t, "alice", "/cms"), 200, `"names_hidden_why":"not a dashboard operator: subject \"alice\"`, "thesis"},
		{"operator", b.mint(t, "ops"), 200, "thesis.root", "names_hidden_why"},
		{"bad token", "abc", 401, "token is malformed", "thesis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", web.SnapshotPath, nil)
			r.Header.Set("Authorization", "Bearer "+tc.token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := w.Body.String(); w.Code != tc.code || !strings.Contains(got, tc.has) || strings.Contains(got, tc.lacks) {
				t.Errorf("%d %s; want %d with %q, without %q", w.Code, got, tc.code, tc.has, tc.lacks)
			}
		})
	}
}
