package director

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func member(name string, key ed25519.PrivateKey, roles []string, root string, prefixes ...string) Member {
	return Member{Name: name, Key: FormatKey(key.Public().(ed25519.PublicKey)), Roles: roles, Prefixes: prefixes, Root: root, HTTPS: "https://" + root}
}

// post sends body with the given headers and returns the status and the
// reply's text.
func post(t *testing.T, srv *httptest.Server, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+APIPrefix+"advertise", bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(msg))
}

func postSigned(t *testing.T, srv *httptest.Server, s *Signer, body []byte) (int, string) {
	t.Helper()
	h := http.Header{}
	s.Sign(h, body)
	return post(t, srv, h, body)
}

func postAd(t *testing.T, srv *httptest.Server, s *Signer, a Ad) (int, string) {
	t.Helper()
	body, _ := json.Marshal(a)
	return postSigned(t, srv, s, body)
}

// syncBuffer is a log sink the director writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// trustDirector is a director with one static server ("legacy", /legacy)
// and the given members, serving its API, with its log captured.
func trustDirector(t *testing.T, cfg Config) (*Director, *httptest.Server, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	cfg.Name = "region"
	cfg.Static = append(cfg.Static, ad("legacy", "L", RoleOrigin, "legacy:1", "/legacy"))
	d := newWithProber(cfg, &fakeProber{}, slog.New(slog.NewTextHandler(logs, nil)))
	run(t, d)
	srv := httptest.NewServer(d.Handler())
	t.Cleanup(srv.Close)
	return d, srv, logs
}

func TestForgedAdvertisementsAreRefused(t *testing.T) {
	keyA, keyB, keyDir, stranger := newKey(t), newKey(t), newKey(t), newKey(t)
	d, srv, logs := trustDirector(t, Config{Members: []Member{
		member("boxA", keyA, []string{RoleOrigin, RoleCache}, "a:1", "/store/a"),
		member("boxB", keyB, []string{RoleOrigin}, "b:1", "/store/b"),
		member("legacy", stranger, []string{RoleOrigin}, "legacy:1", "/legacy"), // approved by mistake under a static name
		member("dirC", keyDir, []string{RoleDirector}, "c:1", "/store/c"),
	}})
	signA := &Signer{Member: "boxA", Key: keyA}
	if code, msg := postAd(t, srv, signA, ad("boxA", "", RoleOrigin, "a:1", "/store/a")); code != 204 {
		t.Fatalf("genuine ad: %d %s", code, msg)
	}
	genuine, _ := json.Marshal(ad("boxB", "", RoleOrigin, "b:1", "/store/b"))
	replay := http.Header{}
	(&Signer{Member: "boxB", Key: keyB}).Sign(replay, genuine)
	if code, msg := post(t, srv, replay, genuine); code != 204 {
		t.Fatalf("genuine ad of boxB: %d %s", code, msg)
	}
	staleSeq := strconv.FormatInt(time.Now().Add(-10*time.Minute).UnixNano(), 10)
	stale := http.Header{HeaderMember: {"boxB"}, HeaderSeq: {staleSeq},
		HeaderSignature: {base64.StdEncoding.EncodeToString(ed25519.Sign(keyB, adMessage("boxB", mustInt(staleSeq), genuine)))}}

	forged := func(a Ad) []byte { b, _ := json.Marshal(a); return b }
	attacker := ad("boxA", "", RoleOrigin, "evil:1", "/store/a")
	tests := []struct {
		name   string
		send   func() (int, string)
		code   int
		reason string
	}{
		{"no credentials", func() (int, string) { return post(t, srv, nil, forged(attacker)) }, 401, "not signed"},
		{"unknown member", func() (int, string) {
			return postAd(t, srv, &Signer{Member: "evil", Key: stranger}, ad("evil", "", RoleOrigin, "evil:1", "/store/a"))
		}, 401, "not a member"},
		{"wrong key", func() (int, string) { return postAd(t, srv, &Signer{Member: "boxA", Key: stranger}, attacker) }, 401, "does not verify"},
		{"body changed after signing", func() (int, string) {
			h := http.Header{}
			signA.Sign(h, forged(ad("boxA", "", RoleOrigin, "a:1", "/store/a")))
			return post(t, srv, h, forged(attacker))
		}, 401, "does not verify"},
		{"replayed", func() (int, string) { return post(t, srv, replay, genuine) }, 401, "replayed"},
		{"stale timestamp", func() (int, string) { return post(t, srv, stale, genuine) }, 401, "from this director's clock"},
		{"prefix not granted", func() (int, string) { return postAd(t, srv, signA, ad("boxA", "", RoleOrigin, "a:1", "/store")) }, 403, "not granted"},
		{"other member's name", func() (int, string) { return postAd(t, srv, signA, ad("boxB", "", RoleOrigin, "a:1", "/store/a")) }, 403, "may advertise only as"},
		{"endpoint not approved", func() (int, string) { return postAd(t, srv, signA, attacker) }, 403, "not those approved"},
		{"role not approved", func() (int, string) { return postAd(t, srv, signA, ad("boxA", "", RoleDirector, "a:1", "/store/a")) }, 403, "approved as"},
		{"servers below a non-director", func() (int, string) {
			a := ad("boxA", "", RoleOrigin, "a:1", "/store/a")
			a.Servers = []Ad{ad("x", "", RoleOrigin, "x:1", "/store/a")}
			return postAd(t, srv, signA, a)
		}, 403, "only a director"},
		{"static entry", func() (int, string) {
			return postAd(t, srv, &Signer{Member: "legacy", Key: stranger}, ad("legacy", "", RoleOrigin, "legacy:1", "/legacy"))
		}, 403, "static server"},
		{"oversized", func() (int, string) {
			return postSigned(t, srv, signA, append([]byte(`{"name":"boxA","x":"`), bytes.Repeat([]byte("a"), MaxAdBytes)...))
		}, 413, "larger than"},
		{"too many children", func() (int, string) {
			a := ad("dirC", "", RoleDirector, "c:1", "/store/c")
			for i := range MaxChildren + 1 {
				a.Servers = append(a.Servers, Ad{Name: fmt.Sprint("k", i), Role: RoleOrigin, Root: "k:1", Prefixes: []string{"/store/c"}})
			}
			return postAd(t, srv, &Signer{Member: "dirC", Key: keyDir}, a)
		}, 413, "servers below the director"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := tc.send()
			if code != tc.code || !strings.Contains(msg, tc.reason) {
				t.Errorf("got %d %q, want %d with %q", code, msg, tc.code, tc.reason)
			}
		})
	}
	for _, s := range d.Servers() {
		if s.Root == "evil:1" {
			t.Errorf("forged entry in the registry: %+v", s)
		}
		if s.Name == "legacy" && !s.Static {
			t.Errorf("static entry replaced: %+v", s)
		}
	}
	if !strings.Contains(logs.String(), "advertisement refused") || !strings.Contains(logs.String(), "replayed") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

func mustInt(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// A child director's servers are taken only under its grant, never over
// a static entry or a member's name, and the ad's interval is clamped.
func TestChildDirectorIsConfinedToItsGrant(t *testing.T) {
	keyA, keyDir := newKey(t), newKey(t)
	d, srv, logs := trustDirector(t, Config{Members: []Member{
		member("boxA", keyA, []string{RoleOrigin}, "a:1", "/store/a"),
		member("dirC", keyDir, []string{RoleDirector}, "c:1", "/store/c"),
	}})
	if code, msg := postAd(t, srv, &Signer{Member: "boxA", Key: keyA}, ad("boxA", "", RoleOrigin, "a:1", "/store/a")); code != 204 {
		t.Fatalf("boxA: %d %s", code, msg)
	}
	top := ad("dirC", "C", RoleDirector, "c:1", "/store/c", "/store")
	top.Interval = 1e9 // would live for ever
	top.Servers = []Ad{
		ad("originC", "C", RoleOrigin, "oc:1", "/store/c/data"),
		ad("wide", "C", RoleOrigin, "w:1", "/store"),        // outside the grant
		ad("boxA", "C", RoleOrigin, "evil:1", "/store/c"),   // a member's name
		ad("legacy", "C", RoleOrigin, "evil:2", "/store/c"), // a static name
	}
	if code, msg := postAd(t, srv, &Signer{Member: "dirC", Key: keyDir}, top); code != 204 {
		t.Fatalf("dirC: %d %s", code, msg)
	}
	got := map[string]Server{}
	for _, s := range d.Servers() {
		got[s.Name] = s
	}
	if s := got["originC"]; s.Via != "dirC" {
		t.Errorf("originC: %+v", s)
	}
	if _, ok := got["wide"]; ok {
		t.Error("a child outside the grant was taken")
	}
	if got["boxA"].Root != "a:1" || got["legacy"].Root != "legacy:1" || !got["legacy"].Static {
		t.Errorf("a child replaced a member or static entry: %+v %+v", got["boxA"], got["legacy"])
	}
	if p := got["dirC"].Prefixes; len(p) != 1 || p[0] != "/store/c" {
		t.Errorf("director prefixes not narrowed to its grant: %v", p)
	}
	if life := time.Until(got["dirC"].Expires); life > 3*MaxInterval+time.Second {
		t.Errorf("interval not clamped: entry lives %s", life)
	}
	if !strings.Contains(logs.String(), "outside its grant") {
		t.Errorf("narrowing not logged:\n%s", logs.String())
	}
}

// Approving (a members file written by the CLI) and revoking take effect
// in a running director, without a restart.
func TestMembersFileApproveAndRevoke(t *testing.T) {
	key := newKey(t)
	path := filepath.Join(t.TempDir(), "federation", "members.json")
	d, srv, _ := trustDirector(t, Config{MembersFile: path})
	s := &Signer{Member: "boxA", Key: key}
	a := ad("boxA", "", RoleOrigin, "a:1", "/store/a")
	if code, _ := postAd(t, srv, s, a); code != 401 {
		t.Fatalf("before approval: %d, want 401", code)
	}
	req, err := Request{Member: member("boxA", key, []string{RoleOrigin}, "a:1", "/store")}.Encode(key)
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Approve([]string{"/store/a"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Approve([]string{"/other"}, time.Now()); err == nil {
		t.Error("approval widened a request")
	}
	if err := UpdateMembers(path, func(ms []Member) ([]Member, error) { return append(ms, m), nil }); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "approved box accepted", func() bool { code, _ := postAd(t, srv, s, a); return code == 204 })
	if len(d.Servers()) != 2 {
		t.Fatalf("registry: %v", d.Servers())
	}
	if code, msg := postAd(t, srv, s, ad("boxA", "", RoleOrigin, "a:1", "/store")); code != 403 {
		t.Errorf("narrowed grant: %d %s", code, msg)
	}
	if err := UpdateMembers(path, func([]Member) ([]Member, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "revoked box dropped", func() bool { _, ok := d.server("boxA"); return !ok })
	if code, _ := postAd(t, srv, s, a); code != 401 {
		t.Errorf("after revocation: %d, want 401", code)
	}
	// A tampered request is caught at approval.
	if _, err := DecodeRequest(req[:len(req)-4] + "AAAA"); err == nil {
		t.Error("tampered request decoded")
	}
}

func TestRegistryIsBounded(t *testing.T) {
	key := newKey(t)
	d, srv, _ := trustDirector(t, Config{MaxServers: 2, Members: []Member{member("boxA", key, []string{RoleOrigin}, "a:1", "/store")}})
	if code, msg := postAd(t, srv, &Signer{Member: "boxA", Key: key}, ad("boxA", "", RoleOrigin, "a:1", "/store")); code != 204 {
		t.Fatalf("%d %s", code, msg)
	}
	if err := d.Advertise(ad("third", "", RoleOrigin, "t:1", "/store")); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("third server in a registry of 2: %v", err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A site box's director reports its own origin and cache below it, the
// cache under the member's own name-cache: both are taken; another
// member's names are not.
func TestChildDirectorReportsItsOwnNames(t *testing.T) {
	t3, other := newKey(t), newKey(t)
	cfg := Config{Name: "region", Members: []Member{
		member("t3", t3, []string{RoleDirector}, "t3.example.org:1095", "/store"),
		member("b", other, []string{RoleOrigin}, "b.example.org:1094", "/store"),
	}}
	d := newTestDirector(t, cfg, &fakeProber{})
	ad := Ad{Name: "t3", Site: "T3", Role: RoleDirector, Root: "t3.example.org:1095", Prefixes: []string{"/store"}, Interval: 1, Servers: []Ad{
		{Name: "t3-origin", Site: "T3", Role: RoleOrigin, Root: "t3.example.org:1094", Prefixes: []string{"/store/user"}},
		{Name: "t3-cache", Site: "T3", Role: RoleCache, Root: "t3.example.org:1094", Prefixes: []string{"/store/mc"}},
		{Name: "b-cache", Site: "B", Role: RoleCache, Root: "evil.example.org:1094", Prefixes: []string{"/store"}},
	}}
	skipped, err := d.accept("t3", ad)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != "b-cache" {
		t.Errorf("skipped %v; want only b-cache (member b's name)", skipped)
	}
	for _, name := range []string{"t3-origin", "t3-cache"} {
		if s, ok := d.server(name); !ok || s.Via != "t3" {
			t.Errorf("%s: %+v, %v; want it below t3", name, s, ok)
		}
	}
}

// A reload that removes a member of the config drops its servers at
// once; one it adds may advertise.
func TestSetMembers(t *testing.T) {
	ka, kb := newKey(t), newKey(t)
	a := member("boxA", ka, []string{RoleOrigin}, "a.example.org:1094", "/store")
	b := member("boxB", kb, []string{RoleOrigin}, "b.example.org:1094", "/store")
	d := newTestDirector(t, Config{Members: []Member{a}}, &fakeProber{})
	if _, err := d.accept("boxA", Ad{Name: "boxA", Role: RoleOrigin, Root: a.Root, Prefixes: []string{"/store"}, Interval: 10}); err != nil {
		t.Fatal(err)
	}
	d.SetMembers([]Member{b})
	if _, ok := d.server("boxA"); ok {
		t.Error("boxA's server is still listed after its member was removed")
	}
	if _, _, ok := d.members.get("boxB"); !ok {
		t.Error("boxB is not a member after the reload")
	}
	if _, _, ok := d.members.get("boxA"); ok {
		t.Error("boxA is still a member after the reload")
	}
}

// The advertisement counters: a director's ad counts once, with its own
// entry and each server below it taken; a refused ad counts as refused.
func TestAdvertisementsAreCounted(t *testing.T) {
	keyA, keyDir := newKey(t), newKey(t)
	d, srv, _ := trustDirector(t, Config{Members: []Member{
		member("boxA", keyA, []string{RoleOrigin}, "a:1", "/store/a"),
		member("dirC", keyDir, []string{RoleDirector}, "c:1", "/store/c"),
	}})
	if code, msg := postAd(t, srv, &Signer{Member: "boxA", Key: keyA}, ad("boxA", "", RoleOrigin, "a:1", "/store/a")); code != 204 {
		t.Fatalf("boxA: %d %s", code, msg)
	}
	top := ad("dirC", "C", RoleDirector, "c:1", "/store/c")
	top.Servers = []Ad{
		ad("originC", "C", RoleOrigin, "oc:1", "/store/c/data"),
		ad("originD", "C", RoleOrigin, "od:1", "/store/c/more"),
		ad("boxA", "C", RoleOrigin, "evil:1", "/store/c"), // a member's name: skipped
	}
	if code, msg := postAd(t, srv, &Signer{Member: "dirC", Key: keyDir}, top); code != 204 {
		t.Fatalf("dirC: %d %s", code, msg)
	}
	if code, _ := postAd(t, srv, &Signer{Member: "boxA", Key: keyA}, ad("boxA", "", RoleOrigin, "a:1", "/elsewhere")); code != http.StatusForbidden {
		t.Fatalf("an ad outside the grant: %d, want 403", code)
	}
	st := d.Stats()
	if st.AdsAccepted != 2 || st.AdsRefused != 1 || st.AdServers != 1+3 {
		t.Errorf("accepted %d, refused %d, entries %d; want 2, 1, 4", st.AdsAccepted, st.AdsRefused, st.AdServers)
	}
}
