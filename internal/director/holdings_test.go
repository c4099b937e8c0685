package director

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
)

func pathNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/f%d", prefix, i)
	}
	return out
}

// A filter never says no for a name put in it, says yes for about one
// name in a hundred it was not given, and checks as well formed.
func TestHoldingsFilter(t *testing.T) {
	for _, n := range []int{0, 1, 50, 10000, MaxHoldingsNames} {
		in := pathNames("/store/in", n)
		h := NewHoldings(in)
		if err := h.check(); err != nil {
			t.Fatalf("%d names: %v", n, err)
		}
		for _, name := range in {
			if !h.mayHold(keyOf(name)) {
				t.Fatalf("%d names: the filter says no for %s, which it was given", n, name)
			}
		}
		fp := 0
		const tries = 20000
		for _, name := range pathNames("/store/out", tries) {
			if h.mayHold(keyOf(name)) {
				fp++
			}
		}
		if rate := float64(fp) / tries; rate > 0.02 {
			t.Errorf("%d names (%d bits, %d hashes): %.3f of names not given pass, want about 0.01", n, len(h.Bits)*8, h.Hashes, rate)
		}
	}
	if h := NewHoldings(pathNames("/x", MaxHoldingsNames+1)); h != nil {
		t.Errorf("a filter for more than MaxHoldingsNames names: %d bits, want none", len(h.Bits)*8)
	}
}

// The director refuses filters it cannot use safely: the wrong number of
// bits or hashes, bits that are not the digest's.
func TestHoldingsCheckRefuses(t *testing.T) {
	good := NewHoldings(pathNames("/store", 10))
	bad := map[string]func(h *Holdings){
		"hashes":     func(h *Holdings) { h.Hashes = 0 },
		"many":       func(h *Holdings) { h.Hashes = 99 },
		"bits":       func(h *Holdings) { h.Bits = h.Bits[:len(h.Bits)-1]; h.Digest = h.digest() },
		"huge":       func(h *Holdings) { h.Bits = make([]byte, maxHoldingsBits/4); h.Digest = h.digest() },
		"tampered":   func(h *Holdings) { h.Bits[0] ^= 0xff },
		"no digest":  func(h *Holdings) { h.Digest = "" },
		"odd digest": func(h *Holdings) { h.Digest = strings.Repeat("z", 300) },
	}
	for what, spoil := range bad {
		h := *good
		h.Bits = append([]byte(nil), good.Bits...)
		spoil(&h)
		a := ad("a", "A", RoleOrigin, "a:1", "/store")
		a.Holdings = &h
		err := checkAd(a)
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "holdings") {
			t.Errorf("%s: checkAd says %v, want a holdings error", what, err)
		}
	}
}

// A filter goes out when it is new or changed and every holdingsRefresh,
// otherwise as its digest; an ad carries at most holdingsBudget bytes of
// filters and the rest follow in the next ads.
func TestHoldingsSender(t *testing.T) {
	var s HoldingsSender
	now := time.Now()
	h := NewHoldings(pathNames("/store", 100))
	origin := Ad{Name: "o", Role: RoleOrigin, Holdings: h}
	sent := func(ads []Ad) bool { return len(ads[0].Holdings.Bits) > 0 }
	if !sent(s.Prepare([]Ad{origin}, now)) {
		t.Fatal("a new filter went out without its bits")
	}
	if got := s.Prepare([]Ad{origin}, now.Add(time.Second)); sent(got) || got[0].Holdings.Digest != h.Digest {
		t.Fatalf("an unchanged filter: %+v, want its digest alone", got[0].Holdings)
	}
	if len(h.Bits) == 0 {
		t.Fatal("Prepare changed the ad's filter in place")
	}
	if !sent(s.Prepare([]Ad{origin}, now.Add(holdingsRefresh+time.Second))) {
		t.Error("a filter was not sent again after holdingsRefresh")
	}
	origin.Holdings = NewHoldings(pathNames("/store", 101))
	if !sent(s.Prepare([]Ad{origin}, now.Add(holdingsRefresh+2*time.Second))) {
		t.Error("a changed filter went out without its bits")
	}

	// A director relaying many servers with large filters.
	var below []Ad
	for i := range 40 {
		below = append(below, Ad{Name: fmt.Sprintf("s%d", i), Role: RoleOrigin, Holdings: NewHoldings(pathNames(fmt.Sprintf("/s%d", i), 20000))})
	}
	dir := []Ad{{Name: "d", Role: RoleDirector, Servers: below}}
	var s2 HoldingsSender
	got := map[string]bool{}
	for round := range 10 {
		bytes := 0
		for _, a := range s2.Prepare(dir, now.Add(time.Duration(round)*time.Second))[0].Servers {
			if n := len(a.Holdings.Bits); n > 0 {
				bytes += n
				got[a.Name] = true
			}
		}
		if bytes > holdingsBudget {
			t.Fatalf("round %d: %d bytes of filters in one ad, budget %d", round, bytes, holdingsBudget)
		}
	}
	if len(got) != len(below) {
		t.Errorf("after 10 ads %d of %d filters went out", len(got), len(below))
	}
}

// The director keeps a filter while ads name its digest, and drops it
// when they name another one it does not have; only origins' are kept.
func TestRegistryKeepsHoldings(t *testing.T) {
	d := newTestDirector(t, Config{Site: "X"}, &fakeProber{})
	h := NewHoldings(pathNames("/store", 10))
	a := ad("a", "A", RoleOrigin, "a:1", "/store")
	a.Holdings = h
	advertiseOK(t, d, a)
	a.Holdings = h.summary()
	advertiseOK(t, d, a)
	if s, _ := d.server("a"); !s.Holdings.usable() || s.Holdings.Digest != h.Digest {
		t.Fatalf("after an ad naming the same digest: %+v, want the filter kept", s.Holdings)
	}
	if s := d.Servers()[0]; len(s.Holdings.Bits) != 0 || s.Holdings.Digest != h.Digest {
		t.Errorf("the federation view shows %d bytes of filter, want its summary", len(s.Holdings.Bits))
	}
	a.Holdings = NewHoldings(pathNames("/store", 11)).summary()
	advertiseOK(t, d, a)
	if s, _ := d.server("a"); s.Holdings.usable() {
		t.Error("an ad naming a filter the director does not have kept the old one")
	}
	c := ad("c", "A", RoleCache, "c:1", "/store")
	c.Holdings = h
	advertiseOK(t, d, c)
	if s, _ := d.server("c"); s.Holdings != nil {
		t.Error("a cache's filter was kept")
	}
}

func advertiseOK(t *testing.T, d *Director, a Ad) {
	t.Helper()
	if err := d.Advertise(a); err != nil {
		t.Fatal(err)
	}
}

// holdingsFleet advertises n origins exporting /store, server i holding
// /store/f<i>, each with a filter of what it holds, except those in stale,
// whose filters are older than their files.
func holdingsFleet(t *testing.T, n int, stale ...int) (*Director, *fakeProber) {
	t.Helper()
	p := &fakeProber{files: map[string][]string{}}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	for i := range n {
		root := fmt.Sprintf("s%d:1", i)
		file := fmt.Sprintf("/store/f%d", i)
		p.files[root] = []string{file}
		a := ad(fmt.Sprintf("s%d", i), fmt.Sprintf("S%d", i%5), RoleOrigin, root, "/store")
		a.Holdings = NewHoldings([]string{"/store", file})
		for _, s := range stale {
			if s == i {
				a.Holdings = NewHoldings([]string{"/store"})
			}
		}
		advertiseOK(t, d, a)
	}
	return d, p
}

// A first open asks the servers the filters point to, not all of them,
// and is sent to the holder; the next open asks no one.
func TestFirstOpenAsksWhereFiltersPoint(t *testing.T) {
	d, p := holdingsFleet(t, 200)
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f17")); to != "s17:1" {
		t.Fatalf("sent to %s, want s17:1", to)
	}
	if n := p.stats.Load(); n > 10 {
		t.Errorf("a first open asked %d of 200 servers, want the holder and a few false positives", n)
	}
	if st := d.Stats(); st.FiltersFound != 1 || st.FiltersMissed != 0 {
		t.Errorf("filtered searches found %d, missed %d; want 1 and 0", st.FiltersFound, st.FiltersMissed)
	}
	time.Sleep(50 * time.Millisecond) // the search records its result
	before := p.stats.Load()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f17")); to != "s17:1" {
		t.Fatalf("again: sent to %s, want s17:1", to)
	}
	if n := p.stats.Load() - before; n != 0 {
		t.Errorf("an open of a located file asked %d servers", n)
	}
}

// A file newer than its server's filter is still found, by asking every
// server; a file no one holds is still not found, after every server
// was asked.
func TestFiltersOnlyOrderTheSearch(t *testing.T) {
	d, p := holdingsFleet(t, 50, 23)
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f23")); to != "s23:1" {
		t.Fatalf("a file its server's filter does not have: sent to %s, want s23:1", to)
	}
	// The search goes on after the redirect, to every server.
	waitUntil(t, "the fallback asks all 50 servers", func() bool { return p.stats.Load() >= 50 })
	before := p.stats.Load()
	err := d.routeT(reqCtx(""), "open", "/store/none").err
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a missing file: %v, want not found", err)
	}
	if n := p.stats.Load() - before; n < 50 {
		t.Errorf("a missing file asked %d servers, want all 50", n)
	}
	if st := d.Stats(); st.FiltersFound != 0 || st.FiltersMissed != 2 {
		t.Errorf("filtered searches found %d, missed %d; want 0 and 2 (the file newer than its filter, the missing one)", st.FiltersFound, st.FiltersMissed)
	}
}

// A walk of an origin's exports puts every file and directory in the
// filter, and gives up past MaxHoldingsNames.
func TestWalkHoldings(t *testing.T) {
	tree := treeStore{"/store": {"a", "sub"}, "/store/sub": {"b"}}
	h, err := WalkHoldings(context.Background(), tree, []string{"/store"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/store", "/store/a", "/store/sub", "/store/sub/b"} {
		if !h.mayHold(keyOf(name)) {
			t.Errorf("the walk left out %s", name)
		}
	}
	if h.Names != 4 {
		t.Errorf("%d names, want 4", h.Names)
	}
	big := treeStore{"/big": nil}
	for i := range MaxHoldingsNames + 1 {
		big["/big"] = append(big["/big"], fmt.Sprintf("f%d", i))
	}
	if _, err := WalkHoldings(context.Background(), big, []string{"/big"}); !errors.Is(err, ErrTooManyNames) {
		t.Errorf("a namespace over the bound: %v, want ErrTooManyNames", err)
	}
}

// treeStore lists directories by name; a child that is a key is a
// directory.
type treeStore map[string][]string

func (s treeStore) Stat(context.Context, string) (store.FileInfo, error) {
	return store.FileInfo{}, store.ErrUnsupported
}
func (s treeStore) Open(context.Context, string) (store.File, error) {
	return nil, store.ErrUnsupported
}
func (s treeStore) List(_ context.Context, name string) ([]store.FileInfo, error) {
	kids, ok := s[name]
	if !ok {
		return nil, store.ErrNotFound
	}
	var out []store.FileInfo
	for _, k := range kids {
		mode := fs.FileMode(0o644)
		if _, dir := s[name+"/"+k]; dir {
			mode = fs.ModeDir | 0o755
		}
		out = append(out, store.FileInfo{Name: k, Mode: mode})
	}
	return out, nil
}

// A file many servers hold is redirected after asking a few of them, and
// different such files are spread over different servers.
func TestFirstOpenOfAFileManyHold(t *testing.T) {
	p := &fakeProber{files: map[string][]string{}}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	files := []string{"/store/a", "/store/b", "/store/c", "/store/d"}
	for i := range 100 {
		root := fmt.Sprintf("s%d:1", i)
		p.files[root] = files
		a := ad(fmt.Sprintf("s%d", i), fmt.Sprintf("S%d", i%5), RoleOrigin, root, "/store")
		a.Holdings = NewHoldings(append([]string{"/store"}, files...))
		advertiseOK(t, d, a)
	}
	sent := map[string]bool{}
	for _, f := range files {
		before := p.stats.Load()
		_, to := redirectOf(t, d.routeT(reqCtx(""), "open", f))
		sent[to] = true
		time.Sleep(50 * time.Millisecond) // the search ends
		if n := p.stats.Load() - before; n > firstAsks {
			t.Errorf("%s: the first open asked %d servers, want at most %d", f, n, firstAsks)
		}
	}
	if len(sent) < 2 {
		t.Errorf("4 files held by the same 100 servers all went to %v", sent)
	}
}

// Over the advertisement API: an origin's malformed filter refuses its
// ad with the reason; a child director's server with one keeps its place
// without the filter; a good filter relayed by a child is kept.
func TestSignedAdsWithHoldings(t *testing.T) {
	keyA, keyDir := newKey(t), newKey(t)
	d, srv, _ := trustDirector(t, Config{Members: []Member{
		member("boxA", keyA, []string{RoleOrigin}, "a:1", "/store/a"),
		member("dirC", keyDir, []string{RoleDirector}, "c:1", "/store/c"),
	}})
	good := NewHoldings([]string{"/store/c/x"})
	bad := *good
	bad.Bits = append([]byte(nil), good.Bits...)
	bad.Bits[0] ^= 1
	a := ad("boxA", "", RoleOrigin, "a:1", "/store/a")
	a.Holdings = &bad
	if code, msg := postAd(t, srv, &Signer{Member: "boxA", Key: keyA}, a); code != 400 || !strings.Contains(msg, "do not match their digest") {
		t.Errorf("an origin's tampered filter: %d %s, want 400 naming the digest", code, msg)
	}
	top := ad("dirC", "C", RoleDirector, "c:1", "/store/c")
	kept, spoilt := ad("keptC", "C", RoleOrigin, "k:1", "/store/c"), ad("spoiltC", "C", RoleOrigin, "s:1", "/store/c")
	kept.Holdings, spoilt.Holdings = good, &bad
	top.Servers = []Ad{kept, spoilt}
	if code, msg := postAd(t, srv, &Signer{Member: "dirC", Key: keyDir}, top); code != 204 {
		t.Fatalf("dirC: %d %s", code, msg)
	}
	if s, ok := d.server("spoiltC"); !ok || s.Holdings != nil {
		t.Errorf("a relayed server with a bad filter: present %v, holdings %+v; want present without", ok, s.Holdings)
	}
	if s, _ := d.server("keptC"); !s.Holdings.usable() || s.Holdings.Digest != good.Digest {
		t.Errorf("a relayed server's good filter: %+v, want kept", s.Holdings)
	}
}
