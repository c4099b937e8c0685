package cache

import (
	"context"
	"errors"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// validate makes sure e describes the upstream's current version.
//
// When the copy is not complete, it asks by opening the file upstream
// rather than by a stat: the open's answer carries the same facts, in the
// same round trip, and the client's first read then finds the file open
// there. After a stat the open followed in the background, and that
// first read waited for it: two round trips where a client reading direct
// pays one.
func (c *Cache) validate(ctx context.Context, e *entry) error {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	c.loadEntryMap(e)
	e.mu.Lock()
	fresh := e.m != nil && time.Since(e.m.Validated) < c.cfg.Revalidate
	complete := e.m != nil && e.m.Complete()
	e.mu.Unlock()
	if fresh {
		return nil
	}
	var (
		op  *openedUp
		fi  store.FileInfo
		err error
	)
	if !complete {
		op, fi, err = c.openStat(ctx, e)
	}
	if op == nil && !isFinal(err, e.route) {
		fi, err = c.statAfterOpen(ctx, e.route, e.path, err)
	}
	e.mu.Lock()
	err = c.checkVersionLocked(e, fi, err)
	// Adopted under e.mu, so a drop of the version it opened cannot
	// come between.
	kept := err == nil && op != nil && e.up.adopt(op)
	e.mu.Unlock()
	if !kept {
		op.close()
	} else {
		c.trimHandles(op.u)
	}
	return err
}

// checkVersionLocked makes e's block map describe the upstream version
// fi (or the upstream's error err): a changed or vanished file's cached
// blocks are dropped. It returns the error the open reports, if any.
// Called with e.mu held.
func (c *Cache) checkVersionLocked(e *entry, fi store.FileInfo, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		if e.m != nil && e.m.Count() > 0 {
			c.log.Info("file gone upstream; dropping cached copy", "path", e.path)
			e.dropLocked()
			// Handles still open keep the old size and now fail upstream.
			e.m = blockmap.New(c.cfg.BlockSize, e.m.Size(), e.m.MTime())
		}
		return err
	case err != nil && e.m != nil && e.m.Complete():
		c.log.Warn("upstream unreachable; serving the complete cached copy", "path", e.path, "err", err)
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return &store.PathError{Op: "open", Path: e.path, Err: store.ErrIsDir}
	}
	if e.m != nil && (e.m.Size() != fi.Size || !e.m.MTime().Equal(fi.ModTime)) {
		c.log.Info("file changed upstream; dropping cached copy", "path", e.path,
			"old_size", e.m.Size(), "new_size", fi.Size, "old_mtime", e.m.MTime(), "new_mtime", fi.ModTime)
		e.dropLocked()
		e.m = nil
	}
	if e.m == nil || e.m.Validated.IsZero() && e.m.Count() == 0 {
		e.m = blockmap.New(c.cfg.BlockSize, fi.Size, fi.ModTime)
	}
	e.m.Validated = time.Now()
	e.dirty = true
	return nil
}

func (c *Cache) upStat(ctx context.Context, r *route, p string) (store.FileInfo, error) {
	return c.upStatOf(ctx, r, r.ups, nil, p)
}

// statAfterOpen stats p where the open of openStat said nothing (openErr
// nil) or failed. A first upstream that did not answer the open (a cut,
// a timeout) is not asked again: the stat goes on to the others, and a
// dead first upstream costs one timeout, as before the open.
func (c *Cache) statAfterOpen(ctx context.Context, r *route, p string, openErr error) (store.FileInfo, error) {
	if openErr == nil || store.IsAnswer(openErr) || ctx.Err() != nil {
		return c.upStat(ctx, r, p)
	}
	errs := []error{c.upstreamErr(r.ups[0], openErr)}
	return c.upStatOf(ctx, r, r.ups[1:], errs, p)
}

func (c *Cache) upStatOf(ctx context.Context, r *route, ups []*upstream, errs []error, p string) (fi store.FileInfo, err error) {
	err = c.eachOf(ctx, ups, errs, func(u *upstream) error {
		var e error
		fi, e = u.Streams[0].Stat(upCtx(ctx, u, store.RequestFrom(ctx).ClientVO()), r.upPath(u, p))
		return e
	})
	return fi, err
}

// openStater is an upstream file that says what its server reported of
// it at open (size, mtime) without another request.
type openStater interface {
	OpenStat() (store.FileInfo, bool)
}

// openedUp is a handle validate opened, on stream si of the first
// upstream, to keep for the reads after.
type openedUp struct {
	u  *upstream
	si int
	f  store.File
}

func (op *openedUp) close() {
	if op != nil {
		go op.f.Close()
	}
}

// openStat opens e's file at its first upstream, on the least busy stream
// not holding it, and returns the handle with what the open said of the
// file. A nil handle with a nil error: the upstream's files say nothing
// at open, so the caller must stat.
func (c *Cache) openStat(ctx context.Context, e *entry) (*openedUp, store.FileInfo, error) {
	if len(e.route.ups) == 0 {
		return nil, store.FileInfo{}, nil
	}
	u := e.route.ups[0]
	c.wantConnected(u)
	si := u.take(e.openCost(u))
	defer u.done(si)
	vo := store.RequestFrom(ctx).ClientVO()
	f, err := u.Streams[si].Open(upCtx(ctx, u, vo), e.route.upPath(u, e.path))
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
	return &openedUp{u: u, si: si, f: f}, fi, nil
}

// isFinal reports whether the open's error err answers the question for
// the whole route: the file is missing at its only upstream. Any other
// failure (a directory, a refused open, a second upstream to ask) is
// asked again by stat, which has the failover and the answers of old.
func isFinal(err error, r *route) bool {
	return errors.Is(err, store.ErrNotFound) && len(r.ups) == 1
}

// adopt keeps op as the file's handle on its stream, counted in its
// upstream's open files; false when the stream holds one already.
func (h *upFiles) adopt(op *openedUp) bool {
	key := [2]int{0, op.si}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.handles[key] != nil {
		return false
	}
	if h.handles == nil {
		h.handles = map[[2]int]*upHandle{}
	}
	uh := &upHandle{u: op.u, ready: make(chan struct{}), f: op.f}
	close(uh.ready)
	op.u.open.Add(1)
	h.handles[key] = uh
	return true
}
