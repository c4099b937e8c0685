package upstream

import (
	"context"
	"errors"

	"sitebox/internal/store"
)

// Ask learns the upstream's version of the file (size, mtime). With open
// (a copy not yet complete), it asks by opening the file at the first
// server rather than by a stat: the open's answer carries the same
// facts, in the same round trip, and the client's first read then finds
// the file open there (Adopt keeps the handle). After a stat the open
// followed in the background, and that first read waited for it: two
// round trips where a client reading direct pays one. Without an
// answer from the open, the servers are asked with a stat.
func (h *File) Ask(ctx context.Context, open bool) (*Opened, store.FileInfo, error) {
	var (
		op  *Opened
		fi  store.FileInfo
		err error
	)
	if open {
		op, fi, err = h.openStat(ctx)
	}
	if op == nil && !h.final(err) {
		fi, err = h.statAfterOpen(ctx, err)
	}
	return op, fi, err
}

// openStater is an upstream file that says what its server reported of
// it at open (size, mtime) without another request.
type openStater interface {
	OpenStat() (store.FileInfo, bool)
}

// Opened is a handle Ask opened, on stream si of the first server, to
// keep for the reads after (Adopt) or Close.
type Opened struct {
	u  *Server
	si int
	f  store.File
}

// Close closes a handle no one adopted; a nil one is nothing.
func (op *Opened) Close() {
	if op != nil {
		go op.f.Close()
	}
}

// openStat opens the file at its first server, on the least busy stream
// not holding it, and returns the handle with what the open said of the
// file. A nil handle with a nil error: the server's files say nothing
// at open, so the caller must stat.
func (h *File) openStat(ctx context.Context) (*Opened, store.FileInfo, error) {
	r := h.route
	if len(r.servers) == 0 {
		return nil, store.FileInfo{}, nil
	}
	u := r.servers[0]
	r.set.wantConnected(u)
	si := u.take(h.openCost(u))
	defer u.done(si)
	vo := store.RequestFrom(ctx).ClientVO()
	f, err := u.Streams[si].Open(upCtx(ctx, u, vo), r.upPath(u, h.path))
	if err != nil {
		return nil, store.FileInfo{}, err
	}
	os, ok := f.(openStater)
	if !ok {
		go f.Close()
		return nil, store.FileInfo{}, nil
	}
	fi, ok := os.OpenStat()
	if !ok {
		go f.Close()
		return nil, store.FileInfo{}, nil
	}
	return &Opened{u: u, si: si, f: f}, fi, nil
}

// final reports whether the open's error err answers the question for
// the whole route: the file is missing at its only server. Any other
// failure (a directory, a refused open, a second server to ask) is
// asked again by stat, which has the failover and the answers of old.
func (h *File) final(err error) bool {
	return errors.Is(err, store.ErrNotFound) && len(h.route.servers) == 1
}

// statAfterOpen stats the file where the open of openStat said nothing
// (openErr nil) or failed. A first server that did not answer the open
// (a cut, a timeout) is not asked again: the stat goes on to the others,
// and a dead first server costs one timeout, as before the open.
func (h *File) statAfterOpen(ctx context.Context, openErr error) (store.FileInfo, error) {
	r := h.route
	if openErr == nil || store.IsAnswer(openErr) || ctx.Err() != nil {
		return r.Stat(ctx, h.path)
	}
	errs := []error{r.set.failed(r.servers[0], openErr)}
	return r.statOf(ctx, r.servers[1:], errs, h.path)
}

// Adopt keeps op as the file's handle on its stream, counted in its
// server's open files; false when the stream holds one already (the
// caller closes op). It may be called under the caller's locks: once it
// lets them go, the caller calls Trim.
func (h *File) Adopt(op *Opened) bool {
	key := [2]int{0, op.si}
	h.mu.Lock()
	if h.handles[key] != nil {
		h.mu.Unlock()
		return false
	}
	if h.handles == nil {
		h.handles = map[[2]int]*handle{}
	}
	uh := &handle{u: op.u, ready: make(chan struct{}), f: op.f}
	close(uh.ready)
	op.u.open.Add(1)
	h.handles[key] = uh
	h.mu.Unlock()
	return true
}

// Trim keeps the server of an adopted handle within its cap of open
// files (Options.Trim, which takes the caller's locks).
func (h *File) Trim(op *Opened) { h.route.set.trim(op.u) }
