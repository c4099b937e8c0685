package auth

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/store"
)

// TestKeyFetchRateLimited: many tokens, good or with unknown kids, cost
// one JWKS fetch while MinRefetch has not passed.
func TestKeyFetchRateLimited(t *testing.T) {
	f := newFixture(t, VerifierConfig{})
	web := f.web.srv.URL
	good := sign(t, "RS256", "a1", f.rsaA, claimsFor(web))
	unknown := sign(t, "RS256", "zz", f.rsaA, claimsFor(web))
	for range 100 {
		if _, err := f.v.Verify(context.Background(), good); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		_, err := f.v.Verify(context.Background(), unknown)
		if err == nil || !strings.Contains(err.Error(), `token key id "zz" is not among the 2 keys of issuer`) {
			t.Fatalf("unknown kid: %v", err)
		}
	}
	if n := f.web.fetches.Load(); n != 1 {
		t.Errorf("%d JWKS fetches, want 1", n)
	}
}

// fakeClock is a settable clock for the verifier's rate limits.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestUnknownKidRefetch: an unknown kid refetches once (then fails, rate
// limited to one fetch per MinRefetch), and a key the issuer adds later
// is found the same way.
func TestUnknownKidRefetch(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	f := newFixture(t, VerifierConfig{now: clock.now})
	web := f.web.srv.URL
	if _, err := f.v.Verify(context.Background(), sign(t, "RS256", "a1", f.rsaA, claimsFor(web))); err != nil {
		t.Fatal(err)
	}
	newKey := mustEC(t)
	tok := sign(t, "ES256", "new", newKey, claimsFor(web))
	for _, step := range []struct {
		name    string
		advance time.Duration
		want    int64
	}{
		{"within MinRefetch of the first fetch", 10 * time.Second, 1},
		{"after MinRefetch", 21 * time.Second, 2},
		{"right after the refetch", time.Second, 2},
		{"still within MinRefetch", 28 * time.Second, 2},
	} {
		clock.add(step.advance)
		if _, err := f.v.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), `token key id "new" is not among`) {
			t.Fatalf("%s: %v", step.name, err)
		}
		if n := f.web.fetches.Load(); n != step.want {
			t.Fatalf("%s: %d fetches, want %d", step.name, n, step.want)
		}
	}
	f.web.setJWKS(jwksOf(t, map[string]any{"a1": &f.rsaA.PublicKey, "new": &newKey.PublicKey}))
	clock.add(2 * time.Second)
	id, err := f.v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	if id.Subject != "alice" || f.web.fetches.Load() != 3 {
		t.Errorf("after rotation: subject %q, %d fetches", id.Subject, f.web.fetches.Load())
	}
}

// TestIssuerUnreachableAtStart: an issuer that is down when the verifier
// starts fails only its own tokens, with a clear reason, and works once
// it answers, without a restart.
func TestIssuerUnreachableAtStart(t *testing.T) {
	tt := newTestTLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	iss := "https://" + addr
	key, fileKey := mustEC(t), mustEC(t)
	file := writeFile(t, "jwks.json", jwksOf(t, map[string]any{"f": &fileKey.PublicKey}))
	v := newTestVerifier(t, VerifierConfig{HTTPClient: tt.client, MinRefetch: 100 * time.Millisecond, Issuers: []IssuerConfig{
		{Issuer: iss}, {Issuer: fileIss, JWKSFile: file},
	}})
	tok := sign(t, "ES256", "k", key, claimsFor(iss))
	_, err = v.Verify(context.Background(), tok)
	if err == nil || !strings.Contains(err.Error(), `cannot fetch keys of issuer "`+iss+`": GET `+iss+`/.well-known/openid-configuration`) {
		t.Fatalf("issuer down: %v", err)
	}
	if !errors.Is(err, store.ErrPermission) {
		t.Errorf("%v does not wrap ErrPermission", err)
	}
	if _, err := v.Verify(context.Background(), sign(t, "ES256", "f", fileKey, claimsFor(fileIss))); err != nil {
		t.Fatalf("other issuer while one is down: %v", err)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	ti := startIssuer(t, tt, ln, jwksOf(t, map[string]any{"k": &key.PublicKey}))
	if ti.srv.URL != iss {
		t.Fatalf("server at %s, want %s", ti.srv.URL, iss)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err = v.Verify(context.Background(), tok)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("issuer back up, still: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIssuerRecoversInBackground: with no tokens arriving, the refresh
// loop retries a failing issuer every MinRefetch, not every Refresh.
func TestIssuerRecoversInBackground(t *testing.T) {
	tt := newTestTLS(t)
	ti := startIssuer(t, tt, nil, []byte("not json"))
	v := newTestVerifier(t, VerifierConfig{HTTPClient: tt.client, MinRefetch: 50 * time.Millisecond,
		Issuers: []IssuerConfig{{Issuer: ti.srv.URL}}})
	is := v.issuers[ti.srv.URL]
	loaded := func() (bool, error) {
		is.mu.Lock()
		defer is.mu.Unlock()
		return len(is.keys) == 1, is.lastErr
	}
	for ti.fetches.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	key := mustEC(t)
	ti.setJWKS(jwksOf(t, map[string]any{"k": &key.PublicKey}))
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, err := loaded()
		if ok && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("issuer keys not refreshed in the background (last error %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := v.Verify(context.Background(), sign(t, "ES256", "k", key, claimsFor(ti.srv.URL))); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyCancelled: a caller whose context ends does not wait for a
// slow issuer.
func TestVerifyCancelled(t *testing.T) {
	tt := newTestTLS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers TLS
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	iss := "https://" + ln.Addr().String()
	v := newTestVerifier(t, VerifierConfig{HTTPClient: tt.client, Issuers: []IssuerConfig{{Issuer: iss}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = v.Verify(ctx, sign(t, "ES256", "k", mustEC(t), claimsFor(iss)))
	if err == nil || !strings.Contains(err.Error(), "cannot fetch keys") || time.Since(start) > 2*time.Second {
		t.Fatalf("Verify after %v: %v", time.Since(start), err)
	}
	v.Close() // must not hang on the stuck fetch
}
