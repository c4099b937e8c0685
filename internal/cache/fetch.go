package cache

import (
	"container/list"
	"slices"
	"sync/atomic"

	"sitebox/internal/cache/blockmap"
)

// fetch is a run of pages of one block coming from upstream. Readers
// that want them while in flight wait on done and copy from buf; the disk
// writer holds a reference too, and the buffer returns to the RAM budget
// when the last reference goes.
type fetch struct {
	p0   int   // first page
	off  int64 // file offset of buf[0]
	gen  uint64
	buf  []byte
	done chan struct{}
	err  error
	refs atomic.Int32
	// subs are the CRC32Cs of buf's 4 KiB pieces (blockmap.SubPage), set
	// before done is closed: the writer combines them into the map's page
	// CRCs, and a reader wanting CRCs served from buf gets them.
	subs []uint32
	// readTo is how far readers have read buf; kept and keptAt say it is
	// kept in RAM after its write (keep.go; keptAt guarded by keeper.mu).
	readTo atomic.Int64
	kept   atomic.Bool
	keptAt *list.Element
}

// unref drops a reference; the last gives the buffer back to the RAM
// budget.
func (f *fetch) unref(c *Cache) {
	if f.refs.Add(-1) == 0 {
		c.budget.put(f.buf)
	}
}

// end is the file offset just past buf.
func (f *fetch) end() int64 { return f.off + int64(len(f.buf)) }

// fetchMissingLocked creates fetches for the pages in [from, to) neither
// present nor in flight: one per run of such pages within a block, as
// RAM allows. Each begins with one reference, the disk writer's. Called
// with e.mu held.
func (e *entry) fetchMissingLocked(from, to int) []*fetch {
	m := e.m
	ppb := m.PagesPerBlock()
	var fresh []*fetch
	for p := from; p < to && p < m.Pages(); {
		if m.Has(p) || e.inflight[p] != nil {
			p++
			continue
		}
		q := p + 1
		for q < to && q < m.Pages() && q%ppb != 0 && !m.Has(q) && e.inflight[q] == nil {
			q++
		}
		f := e.newFetchLocked(p, q)
		if f == nil {
			break // out of RAM: clients come first
		}
		fresh = append(fresh, f)
		p = q
	}
	return fresh
}

// newFetchLocked creates a fetch of pages [p0, p1) if RAM allows, for
// launch, with one reference (the writer's). Called with e.mu held.
func (e *entry) newFetchLocked(p0, p1 int) *fetch {
	m := e.m
	off := int64(p0) * m.PageSize()
	n := min(int64(p1)*m.PageSize(), m.Size()) - off
	buf := e.c.budget.get(n)
	if buf == nil {
		return nil
	}
	f := &fetch{p0: p0, off: off, gen: e.gen, buf: buf, done: make(chan struct{})}
	f.refs.Store(1)
	if e.inflight == nil {
		e.inflight = map[int]*fetch{}
	}
	for p := p0; p < p1; p++ {
		e.inflight[p] = f
	}
	e.fetching.Add(1)
	e.c.acquire(e) // held by the fetch until its pages are written or dropped
	return f
}

// pagesOf is the number of pages f covers.
func (f *fetch) pagesOf(page int64) int { return int((int64(len(f.buf)) + page - 1) / page) }

// fetched hands fetched pages (or the error) to waiting readers, then to
// the disk writer.
func (e *entry) fetched(f *fetch) {
	c := e.c
	e.fetching.Add(-1) // done with the upstream; the disk write may take longer
	if f.err == nil {
		f.subs = blockmap.SubCRCs(f.subs[:0], f.buf)
	}
	close(f.done)
	if f.err != nil || !c.writeBehind(e, f) {
		e.finishFetch(f, false, false, nil)
	}
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

// maxGroupBytes bounds one upstream request of a group of fetches: about
// what one connection carries in a round trip on a 10 ms × 150 MB/s
// link, so a large miss spreads over several streams while a readv's
// scattered misses still go in one request or a few.
const maxGroupBytes = 2 << 20

// minGroupBytes is the smallest group launch makes of a larger miss: a
// readv's 1.5 MiB of scattered pages goes as four requests of 384 KiB
// over four streams, answered in parallel (4× less time on the wire than
// one request), still in one round trip. Below it, the cost of one more
// upstream request outweighs the transfer time saved.
const minGroupBytes = 256 << 10

// groupSpread is how many streams a miss is spread over at most (while
// its groups stay at least minGroupBytes).
const groupSpread = 4

// launch starts the fetches a read (or read-ahead, or a readv's hint)
// created (runs of pages: a scattered reader's misses are a page or two
// each), in groups of up to maxGroupBytes, each group one upstream
// request where the upstream can read scattered ranges at once. Groups
// run in parallel.
func (e *entry) launch(fs []*fetch) {
	if len(fs) == 0 {
		return
	}
	e.c.preopen(e, preopenStreams)
	slices.SortFunc(fs, func(a, b *fetch) int { return a.p0 - b.p0 })
	total := 0
	for _, f := range fs {
		total += len(f.buf)
	}
	limit := min(max(total/groupSpread, minGroupBytes), maxGroupBytes)
	for len(fs) > 0 {
		n, bytes := 0, 0
		for n < len(fs) && (n == 0 || bytes+len(fs[n].buf) <= limit) {
			bytes += len(fs[n].buf)
			n++
		}
		go e.runGroup(fs[:n:n])
		fs = fs[n:]
	}
}

// runGroup reads a group of fetches upstream, in one request where there
// are several, and hands each its bytes or the error.
func (e *entry) runGroup(fs []*fetch) {
	var err error
	if len(fs) == 1 {
		err = e.up.ReadAt(fs[0].buf, fs[0].off)
	} else {
		bufs, offs := make([][]byte, len(fs)), make([]int64, len(fs))
		for i, f := range fs {
			bufs[i], offs[i] = f.buf, f.off
		}
		err = e.up.ReadV(bufs, offs)
	}
	for _, f := range fs {
		f.err = err
		e.fetched(f)
	}
}
