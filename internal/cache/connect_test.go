package cache

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
)

// dialStore is an upstream stream that says whether it is connected, as
// the root:// client does; down makes every dial fail.
type dialStore struct {
	*countingStore
	up    atomic.Bool
	dials atomic.Int64
	down  bool
}

func (s *dialStore) Connected() bool { return s.up.Load() }

func (s *dialStore) Connect(ctx context.Context) error {
	s.dials.Add(1)
	if s.down {
		return errors.New("connection refused")
	}
	s.up.Store(true)
	return nil
}

func dialEnv(t *testing.T, down bool) (*env, []*dialStore) {
	var ds []*dialStore
	e := newEnv(t, func(c *Config) {
		up := c.Routes[0].Upstreams[0].Streams[0].(*countingStore)
		var ss []store.Store
		for range 3 {
			d := &dialStore{countingStore: up, down: down}
			ds = append(ds, d)
			ss = append(ss, d)
		}
		c.Routes[0].Upstreams[0].Streams = ss
	})
	return e, ds
}

// The first open through an upstream has every stream of it dialed in the
// background, so the fetches spread over them later wait for no login.
func TestOpenConnectsEveryStream(t *testing.T) {
	e, ds := dialEnv(t, false)
	e.file("f", 100<<10)
	e.open("/store/f").Close()
	deadline := time.Now().Add(5 * time.Second)
	for _, d := range ds {
		for !d.Connected() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if !d.Connected() {
			t.Fatal("a stream was not connected")
		}
	}
	e.open("/store/f").Close()
	time.Sleep(50 * time.Millisecond)
	for i, d := range ds {
		if n := d.dials.Load(); n != 1 {
			t.Errorf("stream %d dialed %d times, want 1", i, n)
		}
	}
}

// An upstream that cannot be dialed costs one burst of dials per retry
// interval, not one per client open.
func TestConnectRetryIsBounded(t *testing.T) {
	e, ds := dialEnv(t, true)
	e.file("f", 100<<10)
	for range 20 {
		if f, err := e.c.Open(context.Background(), "/store/f"); err == nil {
			f.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i, d := range ds {
		if n := d.dials.Load(); n > 1 {
			t.Errorf("stream %d dialed %d times within the retry interval, want at most 1", i, n)
		}
	}
}

// Streams that connected and then dropped (a cut that healed at once)
// are dialed again at the next open, not a retry interval later: until
// they are, every fetch queues on the few streams still up.
func TestDroppedStreamsRedialAtOnce(t *testing.T) {
	e, ds := dialEnv(t, false)
	e.file("f", 100<<10)
	waitDialed := func(want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for _, d := range ds {
			for (d.dials.Load() < want || !d.Connected()) && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := d.dials.Load(); n != want || !d.Connected() {
				t.Fatalf("stream dialed %d times (connected %v), want %d", n, d.Connected(), want)
			}
		}
	}
	e.open("/store/f").Close()
	waitDialed(1)
	for _, d := range ds {
		d.up.Store(false) // the cut
	}
	e.open("/store/f").Close()
	waitDialed(2)
}
