package server

import (
	"context"
	"sync"

	"sitebox/internal/tpc"
)

// tpcDest is a destination handle's copy (steps 1, 2, 4 of tpc.go).
type tpcDest struct {
	src    tpc.Where
	opaque string // tpc.key and tpc.org for the source
	sink   tpc.Sink

	mu       sync.Mutex
	synced   bool // the rendezvous sync came
	started  bool
	finished bool
	err      error
}

// abandon discards the temporary unless the copy ran (Run cleans up
// after itself) and returns the copy's error, if any.
func (d *tpcDest) abandon(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.started {
		d.started, d.finished = true, true
		d.sink.Abort(context.WithoutCancel(ctx))
		return nil
	}
	return d.err
}
