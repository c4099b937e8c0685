package server

import (
	"context"
	"path"
	"sync"
	"time"

	"sitebox/internal/store"
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
	job      *tpc.Job // set once the copy runs, for its progress
}

// statOpen answers a stat of an open handle. A copy's destination is
// stat'ed by xrdcp as its progress every 2.5 s, and once more after the
// copy ended: its temporary is then closed and renamed, so the answer is
// the landed file, and while the copy lands (the temporary closed, the
// rename not done) the bytes moved so far.
func (s *session) statOpen(of *openFile) (store.FileInfo, error) {
	d := of.tpc
	if d == nil {
		return of.f.Stat()
	}
	d.mu.Lock()
	finished, err, job := d.finished, d.err, d.job
	d.mu.Unlock()
	switch {
	case finished && err == nil:
		return s.srv.store.Stat(s.reqCtx(""), of.path)
	case finished:
		return store.FileInfo{}, err
	}
	if fi, err := of.f.Stat(); err == nil || job == nil {
		return fi, err
	}
	return store.FileInfo{Name: path.Base(of.path), Size: job.Moved(), Mode: 0o644, ModTime: time.Now()}, nil
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
