package cache

import (
	"errors"
	"os"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/dio"
)

type writeJob struct {
	e *entry
	f *fetch
}

// writeBehind queues a fetched block for the disk. It reports false when
// the block will not be cached: the disk is failed or the queue is full
// (the disk is slower than the network), so the reader never waits on it.
func (c *Cache) writeBehind(e *entry, f *fetch) bool {
	if !c.disk.Healthy() {
		return false
	}
	select {
	case c.writeQ <- writeJob{e, f}:
		return true
	default:
		c.ctr.writesDropped.Add(1)
		return false
	}
}

// writer drains the write queue.
func (c *Cache) writer() {
	defer c.wg.Done()
	for job := range c.writeQ {
		job.e.writeBlock(job.f)
	}
}

func (e *entry) writeBlock(f *fetch) {
	c := e.c
	e.mu.Lock()
	current := e.gen == f.gen && e.m != nil
	var page int64
	if current {
		page = e.m.PageSize()
	}
	var err error
	var data *os.File
	// buffered: the write goes through the page cache, which then holds
	// the very bytes the CRCs were computed from.
	buffered := !c.disk.Direct()
	switch {
	case !current || !c.disk.Healthy():
		current = false
	case c.disk.Direct() && len(f.buf) < 1<<20:
		// A few pages for a scattered reader: buffered, so its next read
		// of them is a page-cache copy (O_DIRECT pays off for streams).
		data, err = e.readFile()
		buffered = true
	default:
		data, err = e.dataFile()
	}
	e.mu.Unlock()
	if current && err == nil {
		// The last page is padded to O_DIRECT's alignment; the data file
		// is that much longer than the upstream file (see dataFile).
		buf := f.buf[:dio.AlignUp(int64(len(f.buf)))]
		clear(buf[len(f.buf):])
		_, err = data.WriteAt(buf, f.off)
	}
	switch {
	case errors.Is(err, os.ErrClosed): // the copy was dropped while we wrote
		current = false
	case err != nil:
		e.diskFailed(err)
		current = false
	case current:
		c.disk.Succeeded()
		c.ctr.writtenBytes.Add(int64(len(f.buf)))
		c.kickPurge(int64(len(f.buf)))
	}
	var crcs []uint32
	if current {
		crcs = blockmap.PageCRCs(f.buf, f.subs, page)
	}
	e.finishFetch(f, current, buffered, crcs)
}

// finishFetch retires f: when written, its pages become present (unless
// the cached copy was dropped meanwhile). Pages written through the page
// cache count as checked (checks.go): the kernel holds the bytes their
// CRCs were computed from, so the next small read of them is a plain
// copy rather than a read and check of whole pages.
func (e *entry) finishFetch(f *fetch, written, buffered bool, crcs []uint32) {
	e.mu.Lock()
	if e.m != nil {
		for p := f.p0; p < f.p0+f.pagesOf(e.m.PageSize()); p++ {
			if e.inflight[p] == f {
				delete(e.inflight, p)
			}
		}
	}
	kept := false
	if written && e.gen == f.gen && e.m != nil && f.p0+len(crcs) <= e.m.Pages() {
		e.m.SetPages(f.p0, crcs)
		if buffered {
			e.m.MarkChecked(f.p0, f.p0+len(crcs))
			e.m.KeepSubs(e.c.subs, f.p0, f.subs)
		} else {
			kept = e.keepLocked(f)
		}
		e.dirty = true
	}
	e.mu.Unlock()
	if !kept {
		f.unref(e.c)
	}
	e.c.release(e)
}
