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
