package director

import (
	"testing"
	"time"
)

// A box that stops advertising stays listed as down, from when it missed
// its ads, however long it stays silent: only an operator removes it.
func TestSilentServerStaysDownUntilRemoved(t *testing.T) {
	r := newRegistry(3, 0)
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ad := Ad{Name: "originB", Role: "origin", Interval: 10}
	if _, err := r.advertise(ad, t0, "siteB", nil); err != nil {
		t.Fatal(err)
	}
	expires := t0.Add(30 * time.Second)
	if gone := r.expire(t0.Add(29 * time.Second)); len(gone) != 0 {
		t.Fatalf("down before it missed three ads: %v", gone)
	}
	if gone := r.expire(t0.Add(31 * time.Second)); len(gone) != 1 || gone[0] != "originB" {
		t.Fatalf("newly down after three missed ads: %v", gone)
	}
	for _, later := range []time.Duration{10 * time.Minute, 11 * time.Minute, 24 * time.Hour, 30 * 24 * time.Hour} {
		now := t0.Add(later)
		if gone := r.expire(now); len(gone) != 0 {
			t.Errorf("%v later: reported newly down again: %v", later, gone)
		}
		list := r.list(nil)
		if len(list) != 1 {
			t.Fatalf("%v later: listed %d servers, want the silent one", later, len(list))
		}
		s := list[0]
		if s.usable(now) || !s.DownSince.Equal(expires) {
			t.Errorf("%v later: usable %v, down since %v (want not usable, since %v)", later, s.usable(now), s.DownSince, expires)
		}
	}
	if !r.remove("originB") || len(r.list(nil)) != 0 {
		t.Error("an operator's remove did not drop the silent server")
	}
}
