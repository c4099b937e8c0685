package cache

import (
	"slices"

	"sitebox/internal/cache/blockmap"
)

// Fetching what a read misses: the fetches a plan creates (one per run of
// missing pages within a block), launched in groups of one upstream
// request each, and the upstream handles opened ahead for them
// (preopen). A fetch's life after its bytes arrive is writer.go's.

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

// preopenStreams is how many streams a file is opened on once a reader
// misses: the groups of a few readers' concurrent vector reads
// (groupSpread each) then find the file open on a stream not busy with
// another group.
const preopenStreams = 2 * groupSpread

// preopenFirst is how many of them open as a client opens the file: its
// first miss then finds one open (a group may queue there, see
// upstream.GroupSlack), and a reader whose reads all hit (an analysis job reading
// again what it read before) costs the upstream one open, not eight.
const preopenFirst = 1

// preopen opens e's file at its first upstream, in the background, until
// want streams hold it: one as the file is opened, and the rest of the
// streams a scattered reader's misses spread over (see launch) at its
// first miss. An upstream open costs a round trip, as much as the read it
// precedes, and a reader's vector reads would each wait for one. Only for
// files large enough for their misses to spread, and not complete.
func (c *Cache) preopen(e *entry, want int) {
	e.mu.Lock()
	skip := e.m == nil || e.m.Complete() || e.m.Size() < 2*groupSpread*minGroupBytes
	e.mu.Unlock()
	if skip {
		return
	}
	// Each open holds a reference on e, keeping it from purges.
	e.up.Preopen(want, func() func() {
		c.acquire(e)
		return func() { c.release(e) }
	})
}
