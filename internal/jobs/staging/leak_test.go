package staging

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/store"
)

// siteCache is the site cache's server for a stager with the box's stage
// token: https, serving an origin that takes any token, recording what
// it is sent.
func siteCache(t *testing.T) (base, caFile string, rec *seen) {
	t.Helper()
	o, _ := siteOrigin(t)
	rec = &seen{}
	base, caFile = httpServer(t, "127.0.0.1:0", true, recording(rec, davOver(o, acceptAny{&seen{}})))
	return base, caFile, rec
}

// The box's stage token never goes to a server the job's owner chose:
// outputs to http://, to https:// that asks for a token (401), to a
// roots:// server taking tokens; inputs from them when no site cache
// reroutes them. The site cache's server alone gets it, for an owner the
// box's rules let reach the path.
func TestStageTokenGoesToTheSiteCacheOnly(t *testing.T) {
	ctx := context.Background()
	cache, cacheCA, cacheSeen := siteCache(t)
	evil := &seen{}
	plain, _ := httpServer(t, "127.0.0.1:0", false, recording(evil, demanding))
	fishing, fishingCA := httpServer(t, "127.0.0.1:0", true, recording(evil, demanding))
	o, _ := siteOrigin(t)
	roots, rootsCA := rootsServer(t, o, evil)
	// One CA file trusting the three TLS servers: a certificate problem
	// must not be why a token was not sent.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	var pems []byte
	for _, f := range []string{cacheCA, fishingCA, rootsCA} {
		b, _ := os.ReadFile(f)
		pems = append(pems, b...)
	}
	os.WriteFile(ca, pems, 0o644)

	src := filepath.Join(t.TempDir(), "result.txt")
	os.WriteFile(src, []byte("result\n"), 0o644)
	for _, withCache := range []bool{true, false} {
		s := &Stager{Token: func() string { return stageSecret }, Policy: sitePolicy(t), CAFile: ca,
			Allow: allow(t, "*", "127.0.0.1")} // the servers are on loopback
		if withCache {
			s.Cache = cache
		}
		for _, u := range []string{plain + "/store/out/", fishing + "/store/out/", "roots://" + roots + "//store/out/"} {
			s.Deliver(ctx, alice, src, u, "result.txt")
			s.Fetch(ctx, alice, input(u+"result.txt"), filepath.Join(t.TempDir(), "in"))
			s.Fetch(ctx, alice, input(u+"../user/alice/private.txt"), filepath.Join(t.TempDir(), "in"))
		}
	}
	reqs, creds := evil.snapshot()
	if len(reqs) == 0 {
		t.Fatal("the owner's servers were never reached: the test proves nothing")
	}
	noBoxToken(t, "a server the owner chose", creds)

	// The site cache gets the token for alice's own file, and bob's
	// request for it never leaves the box.
	s := &Stager{Token: func() string { return stageSecret }, Policy: sitePolicy(t), CAFile: ca, Cache: cache}
	dst := filepath.Join(t.TempDir(), "mine")
	if err := s.Fetch(ctx, alice, input("/store/user/alice/private.txt"), dst); err != nil {
		t.Fatalf("alice reading her file through the site cache: %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "alice's secret\n" {
		t.Errorf("got %q", b)
	}
	before, creds := cacheSeen.snapshot()
	if !strings.Contains(strings.Join(creds, "\n"), stageSecret) {
		t.Errorf("the site cache did not get the stage token: %q", creds)
	}
	err := s.Fetch(ctx, bob, input("/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "theirs"))
	if err == nil || !strings.Contains(err.Error(), "bob") {
		t.Errorf("bob through the site cache: %v; want a refusal naming him", err)
	}
	if after, _ := cacheSeen.snapshot(); len(after) != len(before) {
		t.Errorf("bob's refused request reached the site cache: %q", after[len(before):])
	}
}

// Without namespace rules the box cannot judge an owner's rights, so it
// never stages with its own token.
func TestNoRulesNoStageToken(t *testing.T) {
	cache, ca, rec := siteCache(t)
	s := &Stager{Token: func() string { return stageSecret }, CAFile: ca, Cache: cache}
	err := s.Fetch(context.Background(), alice, input("/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
	if err == nil || !strings.Contains(err.Error(), "namespace rules") {
		t.Errorf("staged with the box's token and no rules: %v", err)
	}
	if reqs, _ := rec.snapshot(); len(reqs) != 0 {
		t.Errorf("the site cache was asked: %q", reqs)
	}
}

// Staging reaches other servers only as [tpc] allow lets third-party
// copies: a loopback or private address not listed is refused before
// anything is sent, for inputs, outputs and redirects alike.
func TestStagingDialCheck(t *testing.T) {
	ctx := context.Background()
	internal := &seen{}
	o, _ := siteOrigin(t)
	inside, _ := httpServer(t, "127.0.0.2:0", false, recording(internal, davOver(o, nil)))
	// A server the operator allows, which redirects to the internal one.
	hop, _ := httpServer(t, "127.0.0.1:0", false, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	src := filepath.Join(t.TempDir(), "out")
	os.WriteFile(src, []byte("x\n"), 0o644)
	s := &Stager{Allow: allow(t, "*", "127.0.0.1")}
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"input", func() error {
			return s.Fetch(ctx, alice, input(inside+"/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
		}},
		{"output", func() error { return s.Deliver(ctx, alice, src, inside+"/drop/", "out") }},
		{"redirected input", func() error {
			return s.Fetch(ctx, alice, input(hop+"/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
		}},
		{"root input", func() error {
			return s.Fetch(ctx, alice, input("root://"+strings.TrimPrefix(inside, "http://")+"//store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
		}},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), "[tpc] allow") || !errors.Is(err, store.ErrPermission) {
			t.Errorf("%s: %v; want a refusal naming [tpc] allow", c.name, err)
		}
	}
	if reqs, _ := internal.snapshot(); len(reqs) != 0 {
		t.Errorf("the internal server was reached: %q", reqs)
	}
	// Listed, it is reached.
	s.Allow = allow(t, "127.0.0.0/8")
	if err := s.Fetch(ctx, alice, input(inside+"/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x")); err != nil {
		t.Errorf("an allowed server: %v", err)
	}
}

// A transfer carrying the box's token follows no redirect off the site
// cache's server.
func TestStageTokenFollowsNoRedirect(t *testing.T) {
	elsewhere := &seen{}
	other, _ := httpServer(t, "127.0.0.2:0", false, recording(elsewhere, demanding))
	cacheRec := &seen{}
	cache, ca := httpServer(t, "127.0.0.1:0", true, recording(cacheRec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+r.URL.Path, http.StatusTemporaryRedirect)
	})))
	s := &Stager{Token: func() string { return stageSecret }, Policy: sitePolicy(t), CAFile: ca, Cache: cache, Allow: allow(t, "*", "127.0.0.0/8")}
	err := s.Fetch(context.Background(), alice, input("/store/user/alice/private.txt"), filepath.Join(t.TempDir(), "x"))
	if err == nil {
		t.Fatal("followed the site cache's redirect elsewhere with the box's token")
	}
	if reqs, _ := elsewhere.snapshot(); len(reqs) != 0 {
		t.Errorf("the other server was reached: %q", reqs)
	}
}
