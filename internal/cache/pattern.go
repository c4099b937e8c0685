package cache

import (
	"slices"
	"time"
)

// Following access patterns. A handle's reads say what its reader will
// want next: a stream (adjacent reads, xrdcp's chunks in flight at once)
// fetches whole blocks and earns read-ahead; a reader picking pieces (a
// vector read's segments, uproot's baskets) fetches the pages it reads,
// and tells of a vector read's segments at once (WillNeed) so their
// misses travel upstream together. A file is opened upstream ahead of
// its reads (preopen, fill.go), and fetched whole in the background when
// the cache is told to (prefetch).

// fillAfter is how many bytes a run of adjacent reads must cover before
// its misses are fetched as whole blocks rather than as the pages read:
// 256 KiB (eight pages). A random reader (baskets of a few branches, a
// readv's segments) rarely reads that much in a row, so it fetches about
// what it reads; a stream of small records pays a few page-sized round
// trips before its fetches grow to blocks.
const fillAfter = 256 << 10

// observe follows the handle's access pattern. stream says the read
// continues a run of adjacent reads of at least fillAfter bytes, so its
// misses are best fetched as whole blocks; ahead says the run has covered
// two blocks and earns read-ahead.
func (f *File) observe(off, end int64) (stream, ahead bool) {
	prev := f.maxEnd.Load()
	if end > prev {
		f.maxEnd.CompareAndSwap(prev, end)
	}
	// Parallel chunked readers (xrdcp keeps several reads in flight) are
	// sequential too, just not strictly in order.
	// Patterns are judged in units of at least 1 MiB, whatever the block
	// size: small blocks must not make a reader of small records look
	// like a stream.
	bs := max(f.c.cfg.BlockSize.Bytes(), 1<<20)
	// The first read of a handle (often a header) says nothing about the
	// pattern; a read far behind the furthest one is a jump, not a stream.
	// A gap, even a small one, is a reader picking pieces (uproot reading
	// one branch of interleaved baskets), except a short hop ahead of a
	// run that has earned read-ahead: that is a stream whose reads are
	// served out of order, and it keeps its read-ahead (hopInStream).
	if prev == 0 || off+reorderBlocks*bs < prev || off > prev+4096 && !f.hopInStream(off, prev, bs) {
		f.runStart.Store(off)
		f.runBytes.Store(end - off)
		return false, false
	}
	run := f.runBytes.Add(end - off)
	stream = run >= fillAfter
	// A run earns read-ahead once it has covered two blocks: a reader
	// walking through a few small records (a ROOT file's header and
	// directory) is not streaming, and read-ahead would fetch megabytes
	// nobody asked for. A failed disk keeps nothing: a block fetched
	// ahead would be fetched again when the reader gets there.
	ahead = stream && end-f.runStart.Load() >= 2*bs && f.c.cfg.ReadAhead > 0 && f.c.disk.Healthy()
	return stream, ahead
}

// reorderBlocks is how far from the furthest read a stream's next read
// may land, behind or ahead, and still continue it: a reader keeping
// several reads in flight has them served in any order (xrdcp's chunks; a
// FUSE mount's kernel read-ahead, 8 MiB in 1 MiB requests served in
// parallel, see internal/mount).
const reorderBlocks = 8

// hopInStream says a read at off, past the furthest end prev, continues
// the current run rather than starting a new one: the run has earned
// read-ahead already and off is within reorderBlocks of prev.
func (f *File) hopInStream(off, prev, bs int64) bool {
	return off <= prev+reorderBlocks*bs && f.runBytes.Load() >= fillAfter && prev-f.runStart.Load() >= 2*bs
}

// readAheadFrom starts read-ahead from the block after a read ending at
// end (one the access pattern says earned it, see observe).
func (f *File) readAheadFrom(end int64) {
	bs := f.c.cfg.BlockSize.Bytes()
	f.e.fetchAhead(int((end+bs-1)/bs), f.aheadBlocks())
}

// Read-ahead widens with the link. The configured ReadAhead blocks in
// flight carry at most ReadAhead × block size per round trip: 8 MiB is
// 335 MB/s at 25 ms, 84 MB/s at 100 ms, less than one xrdcp (four 8 MiB
// chunks in flight) moves. A stream whose read has to wait for a block
// its read-ahead fetched has caught up with it: the window was too
// short for the round trip, and the handle's window doubles, as the
// kernel's read-ahead grows for a reader it keeps up with. A reader the
// window keeps ahead of never waits and never widens it.

// aheadBlocks is the handle's read-ahead window in blocks: the widened
// one only while under a quarter of the cache's RAM is in use, so fast
// streams never take the buffers other readers' misses need (a miss
// with no RAM left is read uncached).
func (f *File) aheadBlocks() int {
	if w := int(f.window.Load()); w > 0 && f.c.budget.inUse() < f.c.cfg.RAM.Bytes()/4 {
		return w
	}
	return f.c.cfg.ReadAhead
}

// maxAheadBlocks is how far a handle's window may widen: four times
// the configured read-ahead (32 MiB by default: 1.3 GB/s at 25 ms), and
// never past a sixteenth of the cache's RAM, so a few fast streams leave
// buffers for everyone else.
func (c *Cache) maxAheadBlocks() int {
	bs := c.cfg.BlockSize.Bytes()
	return max(c.cfg.ReadAhead, min(4*c.cfg.ReadAhead, int(c.cfg.RAM.Bytes()/16/bs)))
}

// caughtUp widens the window after a read that earned read-ahead had to
// wait for a block read-ahead fetched. Called with e.mu held.
func (f *File) caughtUp(pl *readPlan) {
	if !pl.ahead || !pl.waitsAhead() {
		return
	}
	if w, limit := max(int(f.window.Load()), f.c.cfg.ReadAhead), f.c.maxAheadBlocks(); w < limit {
		f.window.Store(int32(min(2*w, limit)))
	}
}

// waitsAhead says serving the plan waits for a read-ahead fetch that has
// not finished: a loan of one, or a piece joining one. (A fetch the
// read itself starts is not read-ahead's to answer for: a stream's
// first reads start their own.)
func (pl *readPlan) waitsAhead() bool {
	if pl.loan != nil && !pl.kept {
		return pl.loan.ahead && !pl.loan.finished()
	}
	for _, pc := range pl.pieces {
		if pc.from == fromFetch && !pc.kept && pc.f.ahead && !pc.f.finished() {
			return true
		}
	}
	return false
}

// fetchAhead starts fetches of the missing pages of up to n blocks from
// block from, as far as RAM allows; it never waits. It returns the
// number of fetches started.
func (e *entry) fetchAhead(from, n int) int {
	e.mu.Lock()
	var fresh []*fetch
	if from < e.m.Blocks() {
		first, _ := e.m.BlockPages(from)
		_, end := e.m.BlockPages(min(from+n, e.m.Blocks()) - 1)
		fresh = e.fetchMissingLocked(first, end)
		for _, fe := range fresh {
			fe.ahead = true
		}
	}
	e.mu.Unlock()
	e.c.ctr.readAheadBlocks.Add(int64(len(fresh)))
	e.launch(fresh)
	return len(fresh)
}

// prefetch fetches the whole file in the background, a few blocks at a
// time, pausing while RAM is short.
func (c *Cache) prefetch(e *entry) {
	e.mu.Lock()
	done := e.m.Complete()
	e.mu.Unlock()
	if done {
		return
	}
	c.acquire(e)
	go func() {
		defer c.release(e)
		const window = 8
		e.mu.Lock()
		gen, blocks := e.gen, e.m.Blocks()
		e.mu.Unlock()
		for b := 0; b < blocks; {
			if c.ctx.Err() != nil || !c.disk.Healthy() {
				return // a failed disk keeps nothing: prefetching only doubles upstream reads
			}
			e.mu.Lock()
			stale := e.gen != gen
			inflight := len(e.inflight)
			e.mu.Unlock()
			if stale {
				return
			}
			if inflight >= window {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			if e.fetchAhead(b, 1) == 0 && c.budget.inUse() >= c.cfg.RAM.Bytes() {
				time.Sleep(20 * time.Millisecond) // RAM is short: let clients go first
				continue
			}
			b++
		}
	}()
}

// WillNeed starts fetching the missing pages of every range at once, as
// posix_fadvise(WILLNEED) would: a server answering a vector read calls
// it with the whole list before reading the segments in turn, so the
// misses of one readv cost one round trip upstream, not one per segment.
// Only the pages the ranges touch are fetched: a vector read is a reader
// picking pieces. Each range is an offset and a length. It never waits.
func (f *File) WillNeed(ranges [][2]int64) {
	if f.closed.Load() {
		return
	}
	e := f.e
	var fresh []*fetch
	e.mu.Lock()
	if m := e.m; m != nil {
		for _, r := range ranges {
			off, end := r[0], min(r[0]+r[1], m.Size())
			if off < 0 || off >= end {
				continue
			}
			nf := e.fetchMissingLocked(int(off/m.PageSize()), int((end-1)/m.PageSize())+1)
			fresh = append(fresh, nf...)
			if e.c.budget.inUse() >= e.c.cfg.RAM.Bytes() {
				break // out of RAM: the reads will go upstream uncached
			}
		}
	}
	e.mu.Unlock()
	f.c.ctr.missRequests.Add(int64(len(fresh)))
	e.launch(fresh)
}

// Ready returns a channel closed once the fetches in flight for the
// ranges have ended, or nil when none is: a server answering a vector
// read can then answer later readvs whose data is there first. Each range
// is an offset and a length.
func (f *File) Ready(ranges [][2]int64) <-chan struct{} {
	e := f.e
	var waits []*fetch
	e.mu.Lock()
	if m := e.m; m != nil && len(e.inflight) > 0 {
		for _, r := range ranges {
			off, end := r[0], min(r[0]+r[1], m.Size())
			for p := int(max(off, 0) / m.PageSize()); off < end && int64(p)*m.PageSize() < end; p++ {
				if fl := e.inflight[p]; fl != nil && !slices.Contains(waits, fl) {
					waits = append(waits, fl)
				}
			}
		}
	}
	e.mu.Unlock()
	if len(waits) == 0 {
		return nil
	}
	ch := make(chan struct{})
	go func() {
		for _, w := range waits {
			<-w.done // a fetch ends within FetchTimeout
		}
		close(ch)
	}()
	return ch
}
