package cache

import (
	"context"
	"errors"
	"io/fs"
	"runtime/debug"
	"time"

	"sitebox/internal/cache/blockmap"
)

// scan registers what the cache holds on disk, while clients are served
// already: with a million cached files, reading every block map takes
// minutes, and a file opened before its turn loads its own map (see
// loadEntryMap). Each file becomes a compact record in the index, not an
// entry: its block map is read, summarised and dropped. Purges and
// listings see the records as they come.
func (c *Cache) scan(ctx context.Context) {
	defer c.bg.Done()
	start := time.Now()
	known := func(p string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.entries[p] != nil || c.idx.Get(p) != nil
	}
	n := 0
	err := c.disk.Scan(ctx, known, func(p string, m *blockmap.Map) {
		r := c.ups.Route(p)
		if r == nil || m.BlockSize() != c.cfg.BlockSize.Bytes() {
			c.disk.Remove(p) // no longer cached here, or cached in another block size
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case c.entries[p] != nil || c.idx.Get(p) != nil:
			// Opened meanwhile: its entry loaded the map itself.
		case m.Count() == 0:
			c.disk.Remove(p) // nothing cached: a map saved before any block came
		default:
			c.idx.Add(recordOf(p, m))
			n++
		}
	})
	if err != nil {
		if ctx.Err() == nil {
			// Files opened later still load their own maps.
			c.log.Error("cache: reading the cached files' block maps", "dir", c.cfg.Dir, "err", err)
		}
		return
	}
	close(c.scanned)
	// The walk's garbage (names, map files read) dwarfs what it keeps:
	// hand it back rather than let the process stay at its peak.
	debug.FreeOSMemory()
	c.log.Info("cache scanned", "files", n, "took", time.Since(start).Round(time.Millisecond))
	// Usage is known in full only now: a cache restarted over its marks
	// purges at once, not a purge interval later.
	c.kickPurge(-1)
}

// loadEntryMap gives e the block map saved on disk, if it has none in
// memory: a file first opened since start-up or since it went idle (its
// entry then left memory, see forgetLocked). Called with e.openMu held.
func (c *Cache) loadEntryMap(e *entry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m != nil {
		return
	}
	m, err := c.disk.LoadMap(e.path)
	rc := e.carried
	e.carried = nil
	switch {
	case err == nil && m.BlockSize() == c.cfg.BlockSize.Bytes():
		e.m = m
		if rc != nil && rc.size == m.Size() && rc.mtime == m.MTime().UnixNano() {
			m.CarryChecked(rc.bits)
		}
	case err == nil || !errors.Is(err, fs.ErrNotExist):
		c.disk.Remove(e.path) // unreadable, or another block size: start afresh
	}
}

// carriedChecks are the checked bits of a file that was idle, and the
// version (upstream size and mtime) they belong to.
type carriedChecks struct {
	size, mtime int64
	bits        []uint64
}
