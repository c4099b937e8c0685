package outbound

import (
	"context"
	"testing"
	"time"
)

func TestOutagePausesWithinBudget(t *testing.T) {
	var o Outage
	if o.Lasted() != 0 || !o.Since().IsZero() {
		t.Fatal("a fresh outage has lasted")
	}
	began := time.Now().Add(-time.Second)
	o.Begin(began)
	o.Begin(time.Now()) // later failures do not move its start
	if !o.Since().Equal(began) || o.Lasted() < time.Second {
		t.Errorf("since %v lasted %v, want from %v", o.Since(), o.Lasted(), began)
	}
	t0 := time.Now()
	if err := o.Pause(context.Background(), 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d < 30*time.Millisecond {
		t.Errorf("paused %v, want the 30ms left of the budget", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Pause(ctx, time.Hour); err != context.Canceled {
		t.Errorf("a pause for a caller that left: %v", err)
	}
}

func TestUnreached(t *testing.T) {
	var u Unreached
	if _, ok := u.Since("a:1"); ok {
		t.Fatal("marked before any note")
	}
	first := time.Unix(100, 0)
	u.Mark("a:1", first)
	u.Mark("a:1", time.Unix(200, 0))
	if since, ok := u.Since("a:1"); !ok || !since.Equal(first) {
		t.Errorf("since %v %v, want the first note", since, ok)
	}
	u.Answered("a:1")
	if _, ok := u.Since("a:1"); ok {
		t.Error("still marked after it answered")
	}
}
