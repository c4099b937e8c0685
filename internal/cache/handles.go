package cache

import (
	"container/list"
	"context"
	"time"

	"sitebox/internal/cache/upstream"
)

// idleHandles bounds the upstream files the cache keeps open. A file's
// upstream handles stay open while a client has the cached file open or
// a fetch of it runs, and for UpstreamIdle after the last one ends, so a job that
// reopens a file soon finds them ready. Beyond that they are closed: an
// origin has a limited number of file descriptors, and a cache reading
// many small files one after another must not use them all up (the
// origin would then fail every client, not only the cache).
//
// On top of the idle time, each upstream has a cap (UpstreamFiles): when
// an open would pass it, the handles of the least recently used files no
// one holds are closed at once. Handles that are in use are never closed
// under their readers, so a cache whose clients hold more files open
// than the cap goes over it for as long as they do.
//
// Guarded by Cache.mu, like the entries' open counts that decide
// idleness.
type idleHandles struct {
	lru list.List // of *entry, most recently released first
}

// markIdleLocked records that e's last user let go (or refreshes the
// time). Called with c.mu held.
func (c *Cache) markIdleLocked(e *entry, now time.Time) {
	if e.idle != nil {
		c.idle.lru.Remove(e.idle)
	}
	e.idleSince = now
	e.idle = c.idle.lru.PushFront(e)
}

// markBusyLocked takes e off the idle list: a client opened it.
// Called with c.mu held.
func (c *Cache) markBusyLocked(e *entry) {
	if e.idle != nil {
		c.idle.lru.Remove(e.idle)
		e.idle = nil
	}
}

// closeIdle closes the upstream handles of files idle since before
// cutoff, oldest first. The handles are closed under c.mu, so no client
// can open the file in between (closing itself happens in the
// background). A file still fetching (read-ahead, prefetch) keeps them.
func (c *Cache) closeIdle(cutoff time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for el := c.idle.lru.Back(); el != nil; el = c.idle.lru.Back() {
		e := el.Value.(*entry)
		if !e.idleSince.Before(cutoff) {
			break
		}
		if e.fetching.Load() > 0 {
			c.markIdleLocked(e, time.Now()) // look again one idle time later
			continue
		}
		c.idle.lru.Remove(el)
		e.idle = nil
		n += e.up.CloseAll(nil)
		c.forgetLocked(e)
	}
	return n
}

// trimHandles closes the handles of the least recently used idle files
// until server u is within its cap again (upstream.Options.Trim) and says
// how many it closed there.
func (c *Cache) trimHandles(u *upstream.Server, excess int64) (closed int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tries := c.idle.lru.Len(); closed < excess && tries > 0; tries-- {
		e := c.idle.lru.Back().Value.(*entry)
		if e.fetching.Load() > 0 {
			c.idle.lru.MoveToFront(e.idle)
			continue
		}
		c.idle.lru.Remove(e.idle)
		e.idle = nil
		closed += int64(e.up.CloseAll(u))
		c.forgetLocked(e)
	}
	return closed
}

// handleReaper closes idle upstream handles until ctx ends.
func (c *Cache) handleReaper(ctx context.Context) {
	defer c.bg.Done()
	t := time.NewTicker(max(c.cfg.UpstreamIdle.D()/4, 50*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			c.closeIdle(now.Add(-c.cfg.UpstreamIdle.D()))
		}
	}
}

// forgetLocked moves an entry nobody uses any more back to the index:
// its block map, files and locks leave memory, and a record of a hundred
// bytes or so stays (see index). Entries in use, with upstream handles
// still open, or with a last access the flusher has yet to save, stay.
// Called with c.mu held, after the last release saved the map (a map
// whose save failed is forgotten too: the one on disk is older but
// consistent, and the file is served from it next time).
func (c *Cache) forgetLocked(e *entry) {
	if e.refs > 0 || e.opens > 0 || e.idle != nil || c.entries[e.path] != e || e.up.Handles() != 0 {
		return
	}
	if !e.saveMu.TryLock() {
		// Its map is being saved (by the last release or the flusher):
		// look again one idle time later, when the record can match it.
		c.markIdleLocked(e, time.Now())
		return
	}
	defer e.saveMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.touched {
		// Its last access waits for the flusher: forgotten first, the
		// entry's late save could land over a newer entry's map.
		c.markIdleLocked(e, time.Now())
		return
	}
	delete(c.entries, e.path)
	e.closeFilesLocked()
	if e.m != nil && e.m.Count() > 0 {
		r := recordOf(e.path, e.m)
		c.idx.Add(r)
		if bits := e.m.CheckedBits(); bits != nil {
			c.idx.KeepChecked(r, bits)
		}
	}
}
