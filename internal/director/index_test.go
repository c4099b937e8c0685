package director

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"sitebox/internal/fleet"
)

// names lists servers' names, in order.
func names(ss []*Server) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name
	}
	return out
}

func mustAdvertise(t *testing.T, r *registry, a Ad, now time.Time) {
	t.Helper()
	if _, err := r.advertise(a, now, a.Name, nil); err != nil {
		t.Fatal(err)
	}
}

func wantCovering(t *testing.T, r *registry, role, name string, want ...string) {
	t.Helper()
	if got := names(r.covering(role, name, nil)); !slices.Equal(got, want) {
		t.Errorf("%s covering %s: %v, want %v", role, name, got, want)
	}
}

func TestIndexAddsAndPrefixChanges(t *testing.T) {
	r := newRegistry(3, 0)
	now := time.Now()
	mustAdvertise(t, r, ad("a", "S", RoleOrigin, "a:1", "/store"), now)
	mustAdvertise(t, r, ad("b", "S", RoleOrigin, "b:1", "/store/mc"), now)
	mustAdvertise(t, r, ad("c", "S", RoleOrigin, "c:1", "/"), now)
	mustAdvertise(t, r, ad("d", "S", RoleOrigin, "d:1", "/store", "/store/mc", "/store"), now) // one entry, however listed
	mustAdvertise(t, r, ad("e", "S", RoleCache, "e:1", "/store"), now)

	wantCovering(t, r, RoleOrigin, "/store/mc/f", "a", "b", "c", "d")
	wantCovering(t, r, RoleOrigin, "/store/mc", "a", "b", "c", "d")
	wantCovering(t, r, RoleOrigin, "/store/mcx", "a", "c", "d") // a prefix covers whole names only
	wantCovering(t, r, RoleOrigin, "/other/f", "c")
	wantCovering(t, r, RoleOrigin, "/", "c")
	wantCovering(t, r, RoleCache, "/store/mc/f", "e")
	wantCovering(t, r, RoleCache, "/other", []string{}...)

	// b moves to another prefix; e becomes an origin.
	mustAdvertise(t, r, ad("b", "S", RoleOrigin, "b:1", "/data"), now)
	mustAdvertise(t, r, ad("e", "S", RoleOrigin, "e:1", "/store"), now)
	wantCovering(t, r, RoleOrigin, "/store/mc/f", "a", "c", "d", "e")
	wantCovering(t, r, RoleOrigin, "/data/x", "b", "c")
	wantCovering(t, r, RoleCache, "/store/mc/f", []string{}...)

	if !r.exportsBelow("/data", func(*Server) bool { return true }) || r.exportsBelow("/nothing", func(*Server) bool { return true }) {
		t.Error("exportsBelow: want /data exported, /nothing not")
	}
}

func TestIndexRemovalsAndExpiry(t *testing.T) {
	r := newRegistry(3, 0)
	t0 := time.Now()
	mustAdvertise(t, r, ad("a", "S", RoleOrigin, "a:1", "/store"), t0)
	mustAdvertise(t, r, ad("b", "S", RoleOrigin, "b:1", "/store"), t0)
	region := ad("region", "R", RoleDirector, "r:1", "/store")
	region.Servers = []Ad{ad("c", "R", RoleOrigin, "c:1", "/store"), ad("d", "R", RoleOrigin, "d:1", "/store")}
	mustAdvertise(t, r, region, t0)
	wantCovering(t, r, RoleOrigin, "/store/f", "a", "b", "c", "d")

	// Silent: still indexed (shown as down), not usable.
	later := t0.Add(time.Minute)
	r.expire(later)
	wantCovering(t, r, RoleOrigin, "/store/f", "a", "b", "c", "d")
	if got := r.covering(RoleOrigin, "/store/f", func(s *Server) bool { return s.usable(later) }); len(got) != 0 {
		t.Errorf("usable after missing their ads: %v", names(got))
	}
	mustAdvertise(t, r, ad("a", "S", RoleOrigin, "a:1", "/store"), later)
	if got := names(r.covering(RoleOrigin, "/store/f", func(s *Server) bool { return s.usable(later) })); !slices.Equal(got, []string{"a"}) {
		t.Errorf("usable after a's next ad: %v, want a", got)
	}

	if !r.remove("region") {
		t.Fatal("remove region: not there")
	}
	wantCovering(t, r, RoleOrigin, "/store/f", "a", "b")
	r.dropMember("b")
	wantCovering(t, r, RoleOrigin, "/store/f", "a")
	mustAdvertise(t, r, ad("b", "S", RoleOrigin, "b2:1", "/store"), later) // back, elsewhere
	wantCovering(t, r, RoleOrigin, "/store/f", "a", "b")
	if got := r.atRoots(RoleOrigin, "/store/f", []string{"b:1", "b2:1"}, func(*Server) bool { return true }); len(got) != 1 || got[0].Root != "b2:1" {
		t.Errorf("b by root after it moved: %v", got)
	}
}

// Random adds, prefix changes and removals: the index answers as a scan
// of the whole registry does.
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"/", "/a", "/a/b", "/a/b/c", "/ab", "/d", "/d/e"}
	paths := []string{"/", "/a", "/a/b/c/f", "/a/bc", "/ab/x", "/d/e", "/d/x", "/z"}
	roles := []string{RoleOrigin, RoleCache}
	r := newRegistry(3, 0)
	now := time.Now()
	for step := range 2000 {
		name := fmt.Sprintf("s%d", rng.IntN(40))
		switch rng.IntN(5) {
		case 0:
			r.remove(name)
		default:
			var ps []string
			for range 1 + rng.IntN(3) {
				ps = append(ps, prefixes[rng.IntN(len(prefixes))])
			}
			mustAdvertise(t, r, ad(name, "S", roles[rng.IntN(2)], name+":1", ps...), now)
		}
		if step%7 != 0 {
			continue // let changes pile up between reads too
		}
		for _, role := range roles {
			for _, p := range paths {
				var want []string
				for _, s := range r.list(func(s *Server) bool { return s.Role == role && s.holds(p) }) {
					want = append(want, s.Name)
				}
				if got := names(r.covering(role, p, nil)); !slices.Equal(got, want) && len(got)+len(want) > 0 {
					t.Fatalf("step %d: %s covering %s: %v, a scan finds %v", step, role, p, got, want)
				}
			}
		}
	}
}

// A located path is answered from its holders, until a server that may
// hold it becomes eligible: one joining, one back from down, one out of
// its downtime. Then the servers are asked again.
func TestLocatedPathAsksNewlyEligibleServers(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}, "c:1": {"/store/f"}}}
	d := newTestDirector(t, Config{Site: "A"}, p)
	d.Advertise(ad("a", "B", RoleOrigin, "a:1", "/store"))
	ctx := reqCtx("")
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "a:1" {
		t.Fatalf("sent to %s, want a:1", to)
	}
	asked := p.stats.Load()
	for range 3 {
		redirectOf(t, d.routeT(ctx, "open", "/store/f"))
	}
	if n := p.stats.Load(); n != asked {
		t.Errorf("a located path: %d more stats", n-asked)
	}

	// Joins, at the client's site: asked, and preferred.
	d.Advertise(ad("b", "A", RoleOrigin, "b:1", "/store"))
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "b:1" {
		t.Errorf("after b joined: sent to %s, want b:1", to)
	}

	// Down, then back.
	p.mu.Lock()
	p.down = map[string]bool{"b:1": true}
	p.mu.Unlock()
	d.loc.forget("/store/f")
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "a:1" {
		t.Errorf("b down: sent to %s, want a:1", to)
	}
	p.mu.Lock()
	p.down = nil
	p.mu.Unlock()
	d.Advertise(ad("b", "A", RoleOrigin, "b:1", "/store"))
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "b:1" {
		t.Errorf("b back: sent to %s, want b:1", to)
	}

	// In planned downtime, then out of it.
	c := ad("c", "A", RoleOrigin, "c:1", "/store")
	c.Load = -1 // the least loaded once it may be used
	now := time.Now()
	c.Downtime = &fleet.Downtime{Start: now.Add(-time.Minute), End: now.Add(300 * time.Millisecond), Reason: "test"}
	d.Advertise(c)
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "b:1" {
		t.Errorf("c in downtime: sent to %s, want b:1", to)
	}
	time.Sleep(400 * time.Millisecond)
	if _, to := redirectOf(t, d.routeT(ctx, "open", "/store/f")); to != "c:1" {
		t.Errorf("c's downtime over: sent to %s, want c:1", to)
	}
}

// Readers take no lock: while ads change prefixes and servers come and
// go, every server a lookup returns covers the path in the role asked
// for (run with -race to check the sharing too).
func TestIndexReadsDuringChanges(t *testing.T) {
	r := newRegistry(3, 0)
	now := time.Now()
	done := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range 3000 {
				name := fmt.Sprintf("s%d", rng.IntN(30))
				if rng.IntN(6) == 0 {
					r.remove(name)
					continue
				}
				role := []string{RoleOrigin, RoleCache}[rng.IntN(2)]
				p := []string{"/a", "/a/b", "/c", "/"}[rng.IntN(4)]
				if _, err := r.advertise(ad(name, "S", role, name+":1", p), now, name, nil); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { writers.Wait(); close(done) }()
	for {
		select {
		case <-done:
			return
		default:
		}
		for _, name := range []string{"/a/b/f", "/c/x", "/z"} {
			for _, s := range r.covering(RoleOrigin, name, nil) {
				if s.Role != RoleOrigin || !s.holds(name) {
					t.Fatalf("covering %s: %s (%s %v)", name, s.Name, s.Role, s.Prefixes)
				}
			}
		}
	}
}
