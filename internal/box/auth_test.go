package box

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/config"
	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/webdav"
	xrdserver "sitebox/internal/xrootd/server"
)

// An issuer that does not answer does not stop the box: it starts, serves
// public data, and refuses that issuer's tokens with the reason.
func TestUnreachableIssuerDoesNotStopTheBox(t *testing.T) {
	cfg := &config.Config{
		Exports: []origin.Export{{Prefix: "/store", Pools: []string{t.TempDir()}}},
		Server:  config.Server{StateDir: t.TempDir()},
		Root:    xrdserver.Settings{Addr: "127.0.0.1:0"},
		HTTPS:   webdav.Settings{Addr: "127.0.0.1:0"},
		Auth: auth.Settings{
			Issuers:    []auth.IssuerEntry{{URL: "https://127.0.0.1:1"}},
			Namespaces: []auth.NamespaceEntry{{Prefix: "/store/tok", Read: "token"}},
		},
	}
	cfg.ApplyDefaults("test", false)
	if ps := cfg.Validate(); len(ps) > 0 {
		t.Fatalf("config: %v", ps)
	}
	start := time.Now()
	b, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("New took %v with the issuer down", el)
	}
	if b.tokens == nil {
		t.Fatal("no verifier built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// A token naming the dead issuer: header {"alg":"ES256","kid":"k"},
	// payload {"iss":"https://127.0.0.1:1"}, no valid signature needed to
	// reach the key lookup.
	tok := "eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovLzEyNy4wLjAuMToxIiwiZXhwIjo0MTAyNDQ0ODAwfQ.c2ln"
	_, err = b.tokens.Verify(ctx, tok)
	if !errors.Is(err, store.ErrPermission) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("token of the dead issuer: %v", err)
	}
	// Public data is still served.
	if _, err := b.store.List(ctx, "/store"); err != nil {
		t.Errorf("public listing: %v", err)
	}
}
