package cache

import (
	"slices"
)

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
