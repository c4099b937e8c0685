package cache

import (
	"context"
	"errors"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// validate makes sure e describes the upstream's current version. A
// copy not yet complete asks by opening the file upstream, whose handle
// the first read then uses (upstream.File.Ask).
func (c *Cache) validate(ctx context.Context, e *entry) error {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	c.loadEntryMap(e)
	e.mu.Lock()
	fresh := e.m != nil && time.Since(e.m.Validated) < c.cfg.Revalidate.D()
	complete := e.m != nil && e.m.Complete()
	e.mu.Unlock()
	if fresh {
		return nil
	}
	op, fi, err := e.up.Ask(ctx, !complete)
	e.mu.Lock()
	err = c.checkVersionLocked(e, fi, err)
	// Adopted under e.mu, so a drop of the version it opened cannot
	// come between.
	kept := err == nil && op != nil && e.up.Adopt(op)
	e.mu.Unlock()
	if !kept {
		op.Close()
	} else {
		e.up.Trim(op)
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
			e.m = blockmap.New(c.cfg.BlockSize.Bytes(), e.m.Size(), e.m.MTime())
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
		e.m = blockmap.New(c.cfg.BlockSize.Bytes(), fi.Size, fi.ModTime)
	}
	e.m.Validated = time.Now()
	e.dirty = true
	return nil
}
