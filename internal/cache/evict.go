package cache

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"sitebox/internal/cache/index"
	"sitebox/internal/store"
)

// evictOldest evicts least recently used files nobody uses until
// needBytes and needFiles are freed or nothing is left to evict. The
// candidates are the oldest record of the index (O(log n) each) and the
// entries in memory but not in use, merged by last access: a round costs
// the files it evicts and the files in use, not the files cached.
func (c *Cache) evictOldest(needBytes, needFiles int64) (freedBytes, freedFiles, skipped int64) {
	type cand struct {
		e      *entry
		access int64
	}
	var live []cand
	for _, e := range c.liveEntries() {
		e.mu.Lock()
		if e.m != nil && e.m.Count() > 0 {
			live = append(live, cand{e, e.m.LastAccess.UnixNano()})
		}
		e.mu.Unlock()
	}
	slices.SortFunc(live, func(a, b cand) int { return cmp.Compare(a.access, b.access) })
	for freedBytes < needBytes || freedFiles < needFiles {
		c.mu.Lock()
		r := c.idx.Oldest()
		if len(live) > 0 && (r == nil || live[0].access <= r.ATime) {
			c.mu.Unlock()
			n, ok := c.evictEntry(live[0].e, false)
			live = live[1:]
			if !ok {
				skipped++
				continue
			}
			freedBytes += n
			freedFiles++
			continue
		}
		if r == nil {
			c.mu.Unlock()
			break
		}
		freedBytes += c.evictRecLocked(r)
		freedFiles++
		c.mu.Unlock()
	}
	return freedBytes, freedFiles, skipped
}

// evictRecLocked removes an idle file's record and its files; it returns
// the bytes freed. Called with c.mu held, so no client opens the file
// between the two.
func (c *Cache) evictRecLocked(r *index.Record) int64 {
	c.idx.Remove(r)
	c.disk.Remove(r.Path)
	c.ctr.evictedBytes.Add(r.Cached)
	c.ctr.evictedFiles.Add(1)
	return r.Cached
}

// evictEntry removes e unless it is in use; it returns the bytes freed.
// In use is open by a client for an operator's eviction (clients only:
// a fetch or disk write still finishing sees the new generation and
// drops its data, as when the file changes upstream), and referenced at
// all for the purge, which has other files to take.
func (c *Cache) evictEntry(e *entry, clientsOnly bool) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := e.refs > 0
	if clientsOnly {
		busy = e.opens > 0
	}
	if busy || c.entries[e.path] != e {
		return 0, false
	}
	delete(c.entries, e.path)
	e.mu.Lock()
	freed := e.dropLocked()
	e.mu.Unlock()
	c.ctr.evictedBytes.Add(freed)
	c.ctr.evictedFiles.Add(1)
	return freed, true
}

// evictBatch is how many idle files an eviction removes per hold of the
// cache lock, so clients opening files wait for a batch, not for all.
const evictBatch = 256

// Evict removes the cached copy of path, or of everything below it.
// Files open by clients are skipped and reported with store.ErrBusy.
func (c *Cache) Evict(ctx context.Context, path string) error {
	p, err := store.CleanPath(path)
	if err != nil {
		return err
	}
	var busy []string
	found := 0
	for _, e := range c.liveEntries() {
		if !store.HasPrefix(e.path, p) {
			continue
		}
		e.mu.Lock()
		has := e.m != nil && e.m.Count() > 0
		e.mu.Unlock()
		if !has {
			continue
		}
		found++
		if _, ok := c.evictEntry(e, true); !ok {
			busy = append(busy, e.path)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := 0
		c.mu.Lock()
		var batch []*index.Record
		c.idx.Below(p, "", func(r *index.Record) bool {
			batch = append(batch, r)
			return len(batch) < evictBatch
		})
		for _, r := range batch {
			c.evictRecLocked(r)
			n++
		}
		c.mu.Unlock()
		found += n
		if n < evictBatch {
			break
		}
	}
	switch {
	case found == 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: nothing cached there", store.ErrNotFound)}
	case len(busy) > 0:
		return &store.PathError{Op: "evict", Path: p, Err: fmt.Errorf("%w: %d of %d cached files are open and were kept: %s",
			store.ErrBusy, len(busy), found, strings.Join(busy, ", "))}
	}
	return nil
}
