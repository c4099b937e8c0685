package director

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"sitebox/internal/store"
)

// slowAnswer is how long the slow servers below take to answer: far
// longer than an early redirect may take, well within the locate deadline.
const slowAnswer = 400 * time.Millisecond

// A file several servers hold: the first open is redirected as soon as
// one of them says it has it, not once all have answered; the others'
// answers are still recorded, so later opens choose among every holder
// without asking again.
func TestFirstOpenRedirectsOnFirstHolder(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}, "c:1": {"/store/f"}, "d:1": nil},
		slow:  map[string]time.Duration{"b:1": slowAnswer, "c:1": slowAnswer, "d:1": slowAnswer},
	}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	for _, s := range []string{"a", "b", "c", "d"} {
		srv := ad(s, "S"+s, RoleOrigin, s+":1", "/store")
		if s != "a" {
			srv.Load = -1 // better than a, once known
		}
		d.Advertise(srv)
	}
	t0 := time.Now()
	_, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f"))
	if el := time.Since(t0); to != "a:1" || el >= slowAnswer {
		t.Fatalf("first open: sent to %s after %v, want a:1 before the slow servers answer (%v)", to, el, slowAnswer)
	}
	// The search goes on: b and c are recorded as holders, d as not.
	locs, err := d.Locate(reqCtx(""), "/store/f")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range locs {
		got = append(got, l.Endpoint)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a:1", "b:1", "c:1"}) {
		t.Errorf("holders after the search: %v, want a:1 b:1 c:1", got)
	}
	stats := p.stats.Load()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "b:1" {
		t.Errorf("open once every answer is in: sent to %s, want the least loaded b:1", to)
	}
	if n := p.stats.Load() - stats; n != 0 {
		t.Errorf("open of a located file asked %d servers again", n)
	}
}

// Opens arriving while the first search still runs join it and get the
// holders found so far; one search asks each server once.
func TestOpensDuringSearchShareIt(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": {"/store/f"}, "b:1": nil},
		slow:  map[string]time.Duration{"b:1": slowAnswer},
	}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	for range 5 {
		if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "a:1" {
			t.Fatalf("sent to %s, want a:1", to)
		}
	}
	time.Sleep(slowAnswer + 100*time.Millisecond) // the search ends
	if n := p.stats.Load(); n != 2 {
		t.Errorf("%d stats for 5 opens during one search, want 2", n)
	}
}

// A file no server holds: every answer is waited for, up to the root://
// wait (then kXR_wait, the search going on) and at most the locate
// deadline, and the client then learns it is nowhere.
func TestFileHeldByNoneIsNotFoundAfterTheWait(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": nil, "b:1": nil},
		slow:  map[string]time.Duration{"b:1": slowAnswer},
	}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 100 * time.Millisecond}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	if r := d.routeT(reqCtx(""), "open", "/store/none"); !r.Retry || r.err != nil {
		t.Fatalf("while b has not answered: %+v, want a wait", r)
	}
	time.Sleep(slowAnswer)
	if err := d.routeT(reqCtx(""), "open", "/store/none").err; !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("once every server answered: %v, want not found", err)
	}

	// A server that never answers within the locate deadline does not
	// hold the client past it.
	p.slow["b:1"] = time.Minute
	d2 := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second, LocateTimeout: 200 * time.Millisecond}, p)
	d2.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	d2.Advertise(ad("b", "B", RoleOrigin, "b:1", "/store"))
	t0 := time.Now()
	err := d2.routeT(reqCtx(""), "open", "/store/none").err
	if el := time.Since(t0); !errors.Is(err, store.ErrNotFound) || el > 2*time.Second {
		t.Fatalf("with b silent: %v after %v, want not found after the 200ms deadline", err, el)
	}
}

// A holder that answers late, after every other server said no: the
// client waits for it (within the bounded wait) and is sent there.
func TestLateHolderIsWaitedFor(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": nil, "b:1": nil, "c:1": {"/store/f"}},
		slow:  map[string]time.Duration{"c:1": slowAnswer},
	}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	for _, s := range []string{"a", "b", "c"} {
		d.Advertise(ad(s, "S"+s, RoleOrigin, s+":1", "/store"))
	}
	t0 := time.Now()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "c:1" || time.Since(t0) < slowAnswer {
		t.Fatalf("sent to %s after %v, want c:1 once it answered", to, time.Since(t0))
	}
}

// A holder elsewhere answering first does not send the client away from
// its own site while a server there has not answered: that answer could
// keep the read local.
func TestClientSiteIsWaitedForBeforeARemoteHolder(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"local:1": {"/store/f"}, "remote:1": {"/store/f"}},
		slow:  map[string]time.Duration{"local:1": slowAnswer / 2},
	}
	d := newTestDirector(t, Config{Site: "A", WaitAfter: 5 * time.Second}, p)
	d.Advertise(ad("local", "A", RoleOrigin, "local:1", "/store"))
	d.Advertise(ad("remote", "B", RoleOrigin, "remote:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "local:1" {
		t.Errorf("sent to %s, want the client's site's local:1", to)
	}
	// Not held at the client's site: the remote holder, once the local
	// server said no.
	p.mu.Lock()
	p.files["local:1"] = nil
	p.files["remote:1"] = append(p.files["remote:1"], "/store/g")
	p.mu.Unlock()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/g")); to != "remote:1" {
		t.Errorf("sent to %s, want remote:1", to)
	}
}

// A change (rm, mv) waits for every origin's answer and goes to the best
// holder, as before: only reads are sent to the first holder found.
func TestChangeWaitsForEveryHolder(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}},
		slow:  map[string]time.Duration{"b:1": slowAnswer},
	}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second}, p)
	d.Advertise(ad("a", "A", RoleOrigin, "a:1", "/store"))
	b := ad("b", "B", RoleOrigin, "b:1", "/store")
	b.Load = -1
	d.Advertise(b)
	rt, err := d.Route(reqCtx(""), store.Call{Op: "rm", Path: "/store/f"})
	if err != nil || len(rt.To) == 0 || rt.To[0].Root != "b:1" {
		t.Errorf("rm: %+v %v, want b:1, the least loaded holder", rt, err)
	}
}

// Servers that do not answer do not hold back a holder's answer: the
// client is sent there long before they time out.
func TestSilentServersDoNotHoldBackTheSearch(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"zz:1": {"/store/f"}}, slow: map[string]time.Duration{}}
	d := newTestDirector(t, Config{Site: "X", WaitAfter: 5 * time.Second, LocateTimeout: 5 * time.Second}, p)
	for i := range 128 {
		root := fmt.Sprintf("s%03d:1", i)
		p.slow[root] = time.Minute
		d.Advertise(ad(fmt.Sprintf("s%03d", i), "S", RoleOrigin, root, "/store"))
	}
	d.Advertise(ad("zz", "Z", RoleOrigin, "zz:1", "/store"))
	t0 := time.Now()
	_, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f"))
	if el := time.Since(t0); to != "zz:1" || el > 2*time.Second {
		t.Errorf("sent to %s after %v, want zz:1 well before the silent servers' deadline", to, el)
	}
}

// A server back from being down is asked by the next open even while the
// search that found it down is still waiting for a slow server: the next
// open does not join that search, whose answer for it is stale.
func TestServerBackIsAskedDespiteSearchUnderWay(t *testing.T) {
	p := &fakeProber{
		files: map[string][]string{"a:1": {"/store/f"}, "b:1": {"/store/f"}, "c:1": nil},
		slow:  map[string]time.Duration{"c:1": slowAnswer},
		down:  map[string]bool{"b:1": true},
	}
	d := newTestDirector(t, Config{Site: "A", WaitAfter: 5 * time.Second}, p)
	d.Advertise(ad("a", "B", RoleOrigin, "a:1", "/store"))
	d.Advertise(ad("b", "A", RoleOrigin, "b:1", "/store"))
	d.Advertise(ad("c", "C", RoleOrigin, "c:1", "/store"))
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "a:1" {
		t.Fatalf("b down: sent to %s, want a:1", to)
	}
	// c has not answered yet: the search that found b down is under way.
	p.mu.Lock()
	p.down = nil
	p.mu.Unlock()
	d.Advertise(ad("b", "A", RoleOrigin, "b:1", "/store"))
	t0 := time.Now()
	if _, to := redirectOf(t, d.routeT(reqCtx(""), "open", "/store/f")); to != "b:1" {
		t.Errorf("b back: sent to %s, want b:1, at the client's site", to)
	}
	if el := time.Since(t0); el >= slowAnswer {
		t.Errorf("the open after b came back took %v: it waited for the slow server (%v)", el, slowAnswer)
	}
}
