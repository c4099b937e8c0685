package cache

import (
	"context"
	"errors"
	"io/fs"
	"runtime/debug"
	"time"
)

// scan registers what the cache holds on disk, while clients are served
// already: with a million cached files, reading every block map takes
// minutes, and a file opened before its turn loads its own map (see
// loadEntryMap). Purges and listings see the entries as they come.
func (c *Cache) scan(ctx context.Context) {
	defer c.bg.Done()
	start := time.Now()
	known := func(p string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.entries[p] != nil
	}
	n := 0
	err := c.disk.scan(ctx, known, func(p string, m *blockMap) {
		r := c.route(p)
		if r == nil || m.blockSize != c.cfg.BlockSize {
			c.disk.remove(p) // no longer cached here, or cached in another block size
			return
		}
		c.mu.Lock()
		if c.entries[p] == nil {
			c.entries[p] = &entry{c: c, path: p, route: r, m: m}
			n++
		}
		c.mu.Unlock()
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
}

// loadEntryMap gives e the block map saved on disk, if the start-up scan
// has not reached it yet. Called with e.openMu held.
func (c *Cache) loadEntryMap(e *entry) {
	select {
	case <-c.scanned:
		return
	default:
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m != nil {
		return
	}
	m, err := c.disk.loadMap(e.path)
	switch {
	case err == nil && m.blockSize == c.cfg.BlockSize:
		e.m = m
	case err == nil || !errors.Is(err, fs.ErrNotExist):
		c.disk.remove(e.path) // unreadable, or another block size: start afresh
	}
}
