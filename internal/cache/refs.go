package cache

import (
	"time"
)

// References on an entry: open handles, fetches and prefetches hold one,
// and an entry with any is never purged nor forgotten.

// acquire takes a reference on e, keeping it (and its data) from purges.
func (c *Cache) acquire(e *entry) {
	c.mu.Lock()
	e.refs++
	c.markBusyLocked(e)
	c.mu.Unlock()
}

// release drops a reference. The last one saves the block map if blocks
// came or went, and closes the data file; an entry that holds nothing is
// forgotten. A map whose only change is the last access is left to the
// flusher: the save costs two fsyncs (data and map), which an analysis
// job opening and closing many files would otherwise wait for on each
// close.
func (c *Cache) release(e *entry) {
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	c.mu.Unlock()
	if !last {
		return
	}
	e.mu.Lock()
	content, touched := e.dirty, e.touched
	e.mu.Unlock()
	if content {
		e.flush()
	} else if touched {
		c.touched.add(e)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.refs != 0 {
		return
	}
	e.idleData()
	e.mu.Lock()
	empty := e.m == nil || e.m.Count() == 0
	if empty && c.entries[e.path] == e {
		delete(c.entries, e.path)
		e.dropLocked()
		c.markBusyLocked(e) // forgotten: nothing left to close
	} else if e.opens == 0 {
		c.markIdleLocked(e, time.Now()) // the last fetch or write is done
	}
	e.mu.Unlock()
}
