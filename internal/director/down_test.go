package director

import (
	"errors"
	"strings"
	"testing"
	"time"

	"sitebox/internal/fleet"
	"sitebox/internal/store"
)

// A file whose only holder is down is not "not found": the client waits
// for DownWait, then gets an error naming the server; the server stays
// listed as down.
func TestDownHolderWaitsThenNamesIt(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f"}}, down: map[string]bool{"a:1": true}}
	d := newTestDirector(t, Config{Site: "X", DownWait: 300 * time.Millisecond}, p)
	d.Advertise(ad("originA", "A", RoleOrigin, "a:1", "/store"))
	// The first ask finds a:1 unreachable and marks it down.
	var r routed
	for i := 0; i < 20; i++ {
		if r = d.routeT(reqCtx(""), "open", "/store/f"); r.err != nil || !r.Retry || !strings.Contains(r.Reason, "originA") {
			continue
		}
		break
	}
	if r.err != nil || !r.Retry || !strings.Contains(r.Reason, "originA") {
		t.Fatalf("holder down: got %+v, want a wait naming originA", r)
	}
	deadline := time.Now().Add(3 * time.Second)
	for r.err == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		r = d.routeT(reqCtx(""), "open", "/store/f")
	}
	if !errors.Is(r.err, store.ErrUnavailable) || errors.Is(r.err, store.ErrNotFound) || !strings.Contains(r.err.Error(), "server originA (a:1) is down since") {
		t.Fatalf("after the wait: %v, want an error naming originA as down", r.err)
	}
	if s := d.Servers(); len(s) != 1 || s[0].DownSince.IsZero() {
		t.Errorf("registry: %+v, want originA listed as down", s)
	}
	if st := d.Stats(); st.ServersDown != 1 {
		t.Errorf("servers down: %d, want 1", st.ServersDown)
	}
	if !d.Remove("originA") || len(d.Servers()) != 0 {
		t.Errorf("remove: registry still %+v", d.Servers())
	}
}

func TestDowntimeHolderWaits(t *testing.T) {
	p := &fakeProber{files: map[string][]string{"a:1": {"/store/f"}}}
	d := newTestDirector(t, Config{Site: "X", DownWait: time.Minute}, p)
	a := ad("originA", "A", RoleOrigin, "a:1", "/store")
	now := time.Now()
	a.Downtime = &fleet.Downtime{Start: now.Add(-time.Second), End: now.Add(time.Hour), Reason: "disk swap"}
	d.Advertise(a)
	r := d.routeT(reqCtx(""), "open", "/store/f")
	if r.err != nil || !r.Retry || !strings.Contains(r.Reason, "planned downtime") {
		t.Fatalf("holder in downtime: %+v, want a wait", r)
	}
	a.Downtime.Start = now.Add(-2 * time.Minute)
	d.Advertise(a)
	r = d.routeT(reqCtx(""), "open", "/store/f")
	if !errors.Is(r.err, store.ErrUnavailable) || !strings.Contains(r.err.Error(), "disk swap") {
		t.Fatalf("downtime older than the wait: %v", r.err)
	}
}

// A director that has just started answers "wait", not "not found",
// until its members have advertised.
func TestStartingDirectorWaits(t *testing.T) {
	p := &fakeProber{files: map[string][]string{}}
	d := newTestDirector(t, Config{Site: "X", StartupWait: time.Hour,
		Members: []Member{{Name: "originA", Roles: []string{RoleOrigin}, Prefixes: []string{"/store"}}}}, p)
	if r := d.routeT(reqCtx(""), "open", "/store/f"); r.err != nil || !r.Retry {
		t.Fatalf("starting: %+v, want a wait", r)
	}
	d.Advertise(ad("originA", "A", RoleOrigin, "a:1", "/store"))
	if r := d.routeT(reqCtx(""), "open", "/store/f"); !errors.Is(r.err, store.ErrNotFound) {
		t.Fatalf("after every member advertised: %+v, want not found", r)
	}
}
