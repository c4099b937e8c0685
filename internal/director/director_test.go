package director

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/fleet"
	"sitebox/internal/store"
)

// fakeProber answers from a table: root endpoint → files it holds.
type fakeProber struct {
	mu    sync.Mutex
	files map[string][]string
	down  map[string]bool
	delay time.Duration
	// slow delays one server's answers instead of delay
	slow  map[string]time.Duration
	stats atomic.Int64
}

func (p *fakeProber) Stat(ctx context.Context, root, name string) (store.FileInfo, error) {
	p.stats.Add(1)
	delay := p.delay
	if d, ok := p.slow[root]; ok {
		delay = d
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return store.FileInfo{}, ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down[root] {
		return store.FileInfo{}, fmt.Errorf("dial %s: connection refused", root)
	}
	for _, f := range p.files[root] {
		if f == name {
			return store.FileInfo{Name: name, Size: 1}, nil
		}
		if strings.HasPrefix(f, name+"/") {
			return store.FileInfo{Name: name, Mode: fs.ModeDir}, nil
		}
	}
	return store.FileInfo{}, fs.ErrNotExist
}

func (p *fakeProber) List(ctx context.Context, root, name string) ([]store.FileInfo, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []store.FileInfo
	for _, f := range p.files[root] {
		if strings.HasPrefix(f, name+"/") && !strings.Contains(f[len(name)+1:], "/") {
			out = append(out, store.FileInfo{Name: f[len(name)+1:]})
		}
	}
	return out, nil
}

func newTestDirector(t *testing.T, cfg Config, p *fakeProber) *Director {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "dir"
	}
	d := newWithProber(cfg, p, nil)
	run(t, d)
	return d
}

// run does d's background work as Box.Run does, until the test ends.
func run(t *testing.T, d *Director) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		d.Close()
	})
}

func ad(name, site, role, root string, prefixes ...string) Ad {
	return Ad{Name: name, Site: site, Role: role, Root: root, HTTPS: "https://" + root, Prefixes: prefixes, Interval: 10}
}

func reqCtx(cgi string) context.Context {
	return store.WithRequest(context.Background(), store.NewRequest("127.0.0.1", cgi))
}

// routed is d.route's answer as one value, for the assertions below.
type routed struct {
	store.Route
	err error
}

func (d *Director) routeT(ctx context.Context, op, name string) routed {
	rt, err := d.route(ctx, op, name)
	return routed{rt, err}
}

// redirectOf returns where r sends the client, failing if it does not.
func redirectOf(t *testing.T, r routed) (store.Route, string) {
	t.Helper()
	if r.err != nil || len(r.To) == 0 {
		t.Fatalf("got %+v, want a redirect", r)
	}
	return r.Route, r.To[0].Root
}

func TestRoutePolicy(t *testing.T) {
	p := &fakeProber{files: map[string][]string{
		"a:1": {"/store/both", "/store/onlyA"},
		"b:1": {"/store/both", "/store/onlyB"},
	}}
	d := newTestDirector(t, Config{Site: "A", VO: map[string]store.Endpoint{"cms": {Root: "cms:1094"}, "atlas": {Root: "atlas:1094"}}}, p)
	d.Advertise(ad("originA", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("originB", "B", RoleOrigin, "b:1", "/store"))

	ctx := reqCtx("")
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/both")); to != "a:1" {
		t.Errorf("file at this site and elsewhere: sent to %s, want the local a:1", to)
	}
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/onlyB")); to != "b:1" {
		t.Errorf("file only at B (no cache here): sent to %s", to)
	}
	re, to := redirectOf(t, d.routeT(reqCtx("vo=cms"), "open", "/store/nowhere"))
	if to != "cms:1094" || !strings.Contains(re.Opaque, "vo=cms") || !strings.Contains(re.Opaque, "sbx.hops=1") {
		t.Errorf("VO cms fallback: %s %q", to, re.Opaque)
	}
	if _, to := redirectOf(t, d.routeT(reqCtx("vo=atlas"), "open", "/store/nowhere")); to != "atlas:1094" {
		t.Errorf("VO atlas fallback: %s", to)
	}
	// The VO of a token's groups, passed on to the next hop.
	tokReq := store.NewRequest("127.0.0.1", "")
	tokReq.Identity = &store.Identity{Subject: "alice", Groups: []string{"/atlas/production"}}
	re, to = redirectOf(t, d.routeT(store.WithRequest(context.Background(), tokReq), "open", "/store/nowhere"))
	if to != "atlas:1094" || !strings.Contains(re.Opaque, "vo=atlas") {
		t.Errorf("VO from token groups: %s %q", to, re.Opaque)
	}
	err := d.routeT(ctx, "open", "/store/nowhere").err
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "no server in the federation has it") || !strings.Contains(err.Error(), "no VO given") {
		t.Errorf("nowhere, no VO: %v", err)
	}
	err = d.routeT(reqCtx("vo=lhcb"), "open", "/store/nowhere").err
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `VO "lhcb" has no federation`) {
		t.Errorf("nowhere, unknown VO: %v", err)
	}
	// Loop protection.
	err = d.routeT(reqCtx("sbx.hops=16"), "open", "/store/both").err
	if err == nil || !strings.Contains(err.Error(), "loop") {
		t.Errorf("16 hops: %v", err)
	}
	// A client that failed at a:1 (exact tried=) is sent to the replica.
	if _, to := redirectOf(t, d.routeT(reqCtx("tried=a:1"), "open", "/store/both")); to != "b:1" {
		t.Errorf("tried=a:1: sent to %s", to)
	}
	// The answers were cached: repeated lookups do not ask again.
	n := p.stats.Load()
	for range 10 {
		d.route(ctx, "open", "/store/both")
	}
	if p.stats.Load() != n {
		t.Errorf("repeated lookups probed %d more times", p.stats.Load()-n)
	}
}

func TestRemoteDataGoesThroughSiteCache(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"b:1": {"/store/onlyB"}}}
	d := newTestDirector(t, Config{Site: "C"}, p)
	d.Advertise(ad("originB", "B", RoleOrigin, "b:1", "/store"))
	d.Advertise(ad("cacheC", "C", RoleCache, "c:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/onlyB")); to != "c:1" {
		t.Errorf("remote file at a site with a cache: sent to %s, want the cache", to)
	}
	// Unknown files go to the cache too (its upstream, the regional
	// director, searches further).
	if _, to := redirectOf(t, d.routeT(reqCtx("vo=cms"), "open", "/store/nowhere")); to != "c:1" {
		t.Errorf("unknown file: sent to %s, want the cache", to)
	}
	// The cache filling itself through this director goes to the data.
	if _, to := redirectOf(t, d.routeT(reqCtx("sbx.via=cache"), "open", "/store/onlyB")); to != "b:1" {
		t.Errorf("the cache's own fill: sent to %s, want the replica", to)
	}
	// Back from the cache (XrdCl names its host): straight to the
	// replica, or, for a file nowhere, a clear answer instead of the
	// cache again until the hop limit.
	if _, to := redirectOf(t, d.routeT(reqCtx("tried=c&triedrc=ioerr"), "open", "/store/onlyB")); to != "b:1" {
		t.Errorf("back from a failing cache: sent to %s, want the replica", to)
	}
	err := d.routeT(reqCtx("tried=c&triedrc=enoent"), "open", "/store/nowhere").err
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "already tried at c (enoent)") {
		t.Errorf("back from the cache for a file nowhere: %v", err)
	}
}

func TestParentAndDroppedServers(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"b:1": {"/store/f"}}}
	d := newTestDirector(t, Config{Site: "A", DropAfter: 2, Parents: []store.Endpoint{{Root: "region:1094"}}}, p)
	b := ad("originB", "B", RoleOrigin, "b:1", "/store")
	b.Interval = 0.2
	d.Advertise(b)
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "b:1" {
		t.Fatalf("sent to %s", to)
	}
	// B stops advertising: after 2 missed intervals (+ the 1 s sweep) it is
	// listed as down (not dropped) and requests go up to the parent.
	deadline := time.Now().Add(3 * time.Second)
	for s := d.Servers(); len(s) != 1 || s[0].DownSince.IsZero(); s = d.Servers() {
		if time.Now().After(deadline) {
			t.Fatalf("silent server never marked down: %+v", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "region:1094" {
		t.Errorf("after B dropped: sent to %s, want the parent", to)
	}
}

func TestUnreachableServerIsAvoided(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}}, down: map[string]bool{"a:1": true}}
	d := newTestDirector(t, Config{Site: "X"}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "b:1" {
		t.Errorf("sent to %s, want the reachable b:1", to)
	}
	locs, err := d.Locate(reqCtx(""), "/store/f")
	if err != nil || len(locs) != 1 || locs[0].Endpoint != "b:1" {
		t.Errorf("locate: %+v %v", locs, err)
	}
}

// A client back from a dead server with tried= (XrdCl sends the host
// alone, which two servers on one machine share) gets a recheck of the
// servers it names, and the dead one is avoided although the cached
// answer still lists it.
func TestTriedServersAreRechecked(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"h:1": {"/store/f"}, "h:2": {"/store/f"}}}
	d := newTestDirector(t, Config{Site: "X"}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "h:1", "/store"))
	d.Advertise(ad("b", "B", RoleOrigin, "h:2", "/store"))
	// A first open goes to the first holder to answer; once both have,
	// the choice is by load, then name.
	if _, err := d.Locate(reqCtx(""), "/store/f"); err != nil {
		t.Fatal(err)
	}
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "h:1" {
		t.Fatalf("first choice %s, want h:1 (by name at equal load)", to)
	}
	p.mu.Lock()
	p.down = map[string]bool{"h:1": true}
	p.mu.Unlock()
	for _, tried := range []string{"tried=h", "tried=h:1&triedrc=ioerr"} {
		if _, to := redirectOf(t, d.routeT(reqCtx(tried), "open", "/store/f")); to != "h:2" {
			t.Errorf("%s after h:1 died: sent to %s, want h:2", tried, to)
		}
	}
	// h:1 is back (its next ad clears the mark); h:2 answers but lost
	// the file.
	p.mu.Lock()
	p.down = nil
	p.files["h:2"] = nil
	p.mu.Unlock()
	d.Advertise(ad("a", "A", RoleOrigin, "h:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx("tried=h:2&triedrc=enoent"), "open", "/store/f")); to != "h:1" {
		t.Errorf("after h:2 lost the file: sent to %s, want h:1", to)
	}
}

func TestSlowSearchAsksRootClientsToWait(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f", "/store/g"}}, delay: 300 * time.Millisecond}
	d := newTestDirector(t, Config{Site: "A", WaitAfter: 50 * time.Millisecond}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	if r := d.routeT(reqCtx(""), "open", "/store/f"); !r.Retry {
		t.Fatalf("slow search: %+v, want a wait", r)
	}
	time.Sleep(400 * time.Millisecond)
	redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")) // the search finished meanwhile
	// https clients wait for the answer instead.
	ctx := store.WithRequest(context.Background(), &store.Request{Proto: "https"})
	redirectOf(t, d.routeT(ctx, "open", "/store/g"))
}

func TestLocateAndListMerge(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/x", "/store/y"}, "b:1": {"/store/y", "/store/z"}}}
	d := newTestDirector(t, Config{Site: "A"}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	locs, err := d.Locate(reqCtx(""), "/store/y")
	if err != nil || len(locs) != 2 {
		t.Errorf("locate /store/y: %+v %v", locs, err)
	}
	// xrdfs ls locates the directory ("*/store") and lists each server.
	locs, err = d.Locate(reqCtx(""), "/store")
	if err != nil || len(locs) != 2 {
		t.Errorf("locate of the directory /store: %+v %v, want both servers", locs, err)
	}
	fis, err := d.List(context.Background(), "/store")
	var names []string
	for _, fi := range fis {
		names = append(names, fi.Name)
	}
	if err != nil || strings.Join(names, ",") != "x,y,z" {
		t.Errorf("merged listing %v, %v", names, err)
	}
	root, err := d.List(context.Background(), "/")
	if err != nil || len(root) != 1 || root[0].Name != "store" || !root[0].IsDir() {
		t.Errorf("root listing %+v %v", root, err)
	}
}

func TestAdvertiseAPIAndTree(t *testing.T) {
	p := &fakeProber{}
	key := newKey(t)
	region := newTestDirector(t, Config{Name: "region", Site: "R",
		Members: []Member{member("siteC", key, []string{RoleDirector}, "dc:1", "/store")}}, p)
	srv := httptest.NewServer(region.Handler())
	defer srv.Close()
	site := newTestDirector(t, Config{Name: "siteC", Site: "C"}, p)
	site.Advertise(ad("cacheC", "C", RoleCache, "c:1", "/store"))
	site.Advertise(ad("originC", "C", RoleOrigin, "oc:1", "/store/c"))

	signer := &Signer{Member: "siteC", Key: key}
	a := &fleet.Advertiser[Ad]{To: []string{srv.URL}, Interval: 50 * time.Millisecond, Client: srv.Client(), Log: nil, Signer: signer,
		Ads: func() []Ad {
			top := ad("siteC", "C", RoleDirector, "dc:1")
			top.Interval = (50 * time.Millisecond).Seconds()
			top.Servers = site.AdvertisedServers()
			return []Ad{top}
		}}
	a.Log = region.log
	ctx, cancel := context.WithCancel(context.Background())
	go a.Run(ctx)
	defer cancel()
	deadline := time.Now().Add(2 * time.Second)
	for len(region.Servers()) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := map[string]string{}
	for _, s := range region.Servers() {
		got[s.Name] = s.Via
	}
	if len(got) != 3 || got["originC"] != "siteC" || got["cacheC"] != "siteC" || got["siteC"] != "" {
		t.Errorf("region learned %v", got)
	}
	// Malformed ads from a member are 400 (unsigned ones are 401 before
	// anything is read: see trust_test.go).
	for _, body := range []string{`{`, `{"name":"x","role":"origin"}`, `{"name":"x","role":"boss","root":"h:1"}`, `{"name":"x","role":"origin","root":"h:1","prefixes":["../etc"]}`, `{"bogus":1}`} {
		if code, msg := postSigned(t, srv, signer, []byte(body)); code != 400 {
			t.Errorf("advertise %s: %d %s, want 400", body, code, msg)
		}
	}
}

// A regional director prefers the replica and the cache at the client's
// own site, told from the client's network; an address no site or
// several sites share falls back to the director's own site.
func TestClientSiteFromNetwork(t *testing.T) {
	p := &fakeProber{files: map[string][]string{
		"10.1.1.5:1094": {"/store/both", "/store/onlyA"},
		"10.2.2.5:1094": {"/store/both"},
	}}
	d := newTestDirector(t, Config{Site: "R"}, p)
	d.Advertise(ad("originA", "A", RoleOrigin, "10.1.1.5:1094", "/store"))
	d.Advertise(ad("originB", "B", RoleOrigin, "10.2.2.5:1094", "/store"))
	d.Advertise(ad("cacheB", "B", RoleCache, "10.2.2.6:1094", "/store"))
	from := func(client, name string) string {
		ctx := store.WithRequest(context.Background(), store.NewRequest(client, ""))
		_, to := redirectOf(t, d.routeT(ctx, "open", name))
		return to
	}
	for _, c := range []struct{ client, name, want string }{
		{"10.2.2.77", "/store/both", "10.2.2.5:1094"},  // B's replica for a B client
		{"10.1.1.9", "/store/both", "10.1.1.5:1094"},   // A's for an A client
		{"10.2.2.77", "/store/onlyA", "10.2.2.6:1094"}, // remote data via B's cache
		{"192.0.2.1", "/store/onlyA", "10.1.1.5:1094"}, // unknown network: the replica
	} {
		if got := from(c.client, c.name); got != c.want {
			t.Errorf("client %s, %s: sent to %s, want %s", c.client, c.name, got, c.want)
		}
	}
}

// A server in a planned downtime is routed around, and back in service
// when it ends.
func TestDowntimeRoutesAround(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}}}
	d := newTestDirector(t, Config{Site: "A"}, p) // a is the client's site's: preferred when it may be used
	a := ad("a", "A", RoleOrigin, "a:1", "/store")
	a.Downtime = &fleet.Downtime{Start: time.Now().Add(-time.Minute), End: time.Now().Add(time.Hour), Reason: "disk swap"}
	d.Advertise(a)
	d.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "b:1" {
		t.Errorf("sent to %s during a's downtime", to)
	}
	a.Downtime = &fleet.Downtime{Start: time.Now().Add(time.Hour), End: time.Now().Add(2 * time.Hour), Reason: "later"}
	d.Advertise(a)
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "a:1" {
		t.Errorf("sent to %s with a's downtime not started yet", to)
	}
}

// A client back from the only server holding a path, refused there with
// a file system error (a 3005: "not a directory", "not empty"), gets an
// answer, not the same server again until the redirect limit.
func TestRefusedByEveryHolder(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"h:1": {"/store/f"}, "g:1": {"/store/g"}, "h:2": {"/store/g"}}}
	d := newTestDirector(t, Config{Site: "X"}, p)
	d.Advertise(ad("a", "X", RoleOrigin, "h:1", "/store"))
	d.Advertise(ad("b", "X", RoleOrigin, "g:1", "/store"))
	d.Advertise(ad("c", "X", RoleOrigin, "h:2", "/store"))
	for _, c := range []store.Call{
		{Op: "stat", Path: "/store/f"},
		{Op: "rm", Path: "/store/f"},
		{Op: "create", Path: "/store/new", Create: store.CreateOptions{Truncate: true}}, // an upload
	} {
		_, err := d.Route(reqCtx("tried=h,g&triedrc=fserr"), c)
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "refused it with a file system error") {
			t.Errorf("%s back from every server it could go to: %v", c.Op, err)
		}
	}
	// Another host holds it: the client goes there.
	if _, to := redirectOf(t, d.routeT(reqCtx("tried=h&triedrc=fserr"), "open", "/store/g")); to != "g:1" {
		t.Errorf("back from h with another holder: sent to %s, want g:1", to)
	}
	// A server that failed (not one that answered) may be asked again.
	if _, to := redirectOf(t, d.routeT(reqCtx("tried=h&triedrc=ioerr"), "open", "/store/f")); to != "h:1" {
		t.Errorf("back from an i/o error: sent to %s, want h:1 again", to)
	}
}
