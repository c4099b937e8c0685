package cache

import (
	"fmt"
	"io"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
)

// File is a cached file open for reading.
type File struct {
	c      *Cache
	e      *entry
	once   sync.Once
	closed atomic.Bool
	// maxEnd is the furthest offset read so far; a read near it counts as
	// sequential and triggers read-ahead.
	maxEnd atomic.Int64
	// runStart is where the current sequential run began.
	runStart atomic.Int64
}

var _ store.File = (*File)(nil)

// ReadAt reads through the cache: every block the range touches is asked
// for at once (so the misses are fetched in parallel), then copied out in
// order. It returns exactly the upstream bytes or an error, never less
// than asked except at end of file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if f.closed.Load() {
		return 0, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: file is closed", store.ErrInvalid)}
	}
	if off < 0 {
		return 0, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: negative offset", store.ErrInvalid)}
	}
	e, bs := f.e, f.c.cfg.BlockSize
	size := e.size()
	if off >= size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), size)
	first, last := int(off/bs), int((end-1)/bs)
	slots := make([]slot, 0, last-first+1)
	var fresh []*fetch
	for b := first; b <= last; b++ {
		s := e.want(b)
		if s.fresh {
			fresh = append(fresh, s.f)
		}
		slots = append(slots, s)
	}
	e.launch(fresh)
	f.readAhead(off, end)
	var err error
	n := 0
	for _, s := range slots {
		if err != nil { // release the fetches we joined but will not read
			if s.f != nil {
				s.f.unref(f.c)
			}
			continue
		}
		blockOff := int64(s.b) * bs
		from := max(off, blockOff) - blockOff
		to := min(end, blockOff+s.bytes) - blockOff
		if err = e.readSlot(s, p[n:n+int(to-from)], from); err == nil {
			n += int(to - from)
		}
	}
	if err != nil {
		return 0, err
	}
	if end-off < int64(len(p)) {
		return n, io.EOF
	}
	return n, nil
}

// readAhead starts fetches for the blocks after a sequential read, as far
// as RAM allows; it never waits.
func (f *File) readAhead(off, end int64) {
	ra := f.c.cfg.ReadAhead
	// A failed disk keeps nothing: a block fetched ahead would be fetched
	// again when the reader gets there.
	if ra <= 0 || !f.c.disk.healthy() {
		return
	}
	prev := f.maxEnd.Load()
	if end > prev {
		f.maxEnd.CompareAndSwap(prev, end)
	}
	// Parallel chunked readers (xrdcp keeps several reads in flight) are
	// sequential too, just not strictly in order.
	// Patterns are judged in units of at least 1 MiB, whatever the block
	// size: small blocks must not make a reader of small records look
	// like a stream.
	bs := max(f.c.cfg.BlockSize, 1<<20)
	// The first read of a handle (often a header) says nothing about the
	// pattern; a read far behind the furthest one is a jump, not a stream.
	// A gap, even a small one, is a reader picking pieces (uproot reading
	// one branch of interleaved baskets): it gets no read-ahead.
	if prev == 0 || off > prev+4096 || off+4*bs < prev {
		f.runStart.Store(off)
		return
	}
	// A run earns read-ahead once it has covered two blocks: a reader
	// walking through a few small records (a ROOT file's header and
	// directory) is not streaming, and read-ahead would fetch megabytes
	// nobody asked for.
	if end-f.runStart.Load() < 2*bs {
		return
	}
	bsz := f.c.cfg.BlockSize
	f.e.fetchAhead(int((end+bsz-1)/bsz), ra)
}

// fetchAhead starts fetches of up to n missing blocks from block from.
func (e *entry) fetchAhead(from, n int) int {
	e.mu.Lock()
	var fresh []*fetch
	for b := from; b < from+n && b < e.m.blocks(); b++ {
		if e.m.has(b) || e.inflight[b] != nil {
			continue
		}
		f := e.newFetchLocked(b, 1)
		if f == nil {
			break // out of RAM: clients come first
		}
		fresh = append(fresh, f)
		e.c.ctr.readAheadBlocks.Add(1)
	}
	e.mu.Unlock()
	e.launch(fresh)
	return len(fresh)
}

// prefetch fetches the whole file in the background, a few blocks at a
// time, pausing while RAM is short.
func (c *Cache) prefetch(e *entry) {
	e.mu.Lock()
	done := e.m.complete()
	e.mu.Unlock()
	if done {
		return
	}
	c.acquire(e)
	go func() {
		defer c.release(e)
		const window = 8
		e.mu.Lock()
		gen, blocks := e.gen, e.m.blocks()
		e.mu.Unlock()
		for b := 0; b < blocks; {
			if c.ctx.Err() != nil || !c.disk.healthy() {
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
			if e.fetchAhead(b, 1) == 0 && c.budget.inUse() >= c.cfg.RAM {
				time.Sleep(20 * time.Millisecond) // RAM is short: let clients go first
				continue
			}
			b++
		}
	}()
}

// Stat describes the cached file.
func (f *File) Stat() (store.FileInfo, error) {
	f.e.mu.Lock()
	defer f.e.mu.Unlock()
	return store.FileInfo{Name: path.Base(f.e.path), Size: f.e.m.size, Mode: 0o444, ModTime: f.e.m.mtime}, nil
}

// Close releases the file; its blocks stay cached.
func (f *File) Close() error {
	f.once.Do(func() {
		f.closed.Store(true)
		f.e.touch(time.Now())
		f.c.mu.Lock()
		f.e.opens--
		if f.e.opens == 0 {
			f.c.markIdleLocked(f.e, time.Now())
		}
		f.c.mu.Unlock()
		f.c.release(f.e)
	})
	return nil
}

// WillNeed starts fetching the missing blocks of every range at once, as
// posix_fadvise(WILLNEED) would: a server answering a vector read calls
// it with the whole list before reading the segments in turn, so the
// misses of one readv cost one round trip upstream, not one per segment.
// Each range is an offset and a length. It never waits.
func (f *File) WillNeed(ranges [][2]int64) {
	if f.closed.Load() {
		return
	}
	e, bs := f.e, f.c.cfg.BlockSize
	size := e.size()
	var fresh []*fetch
	defer func() { e.launch(fresh) }()
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range ranges {
		off, end := r[0], min(r[0]+r[1], size)
		if off < 0 || off >= end {
			continue
		}
		for b := int(off / bs); b <= int((end-1)/bs) && b < e.m.blocks(); b++ {
			if e.m.has(b) || e.inflight[b] != nil {
				continue
			}
			nf := e.newFetchLocked(b, 1)
			if nf == nil {
				return // out of RAM: the reads will go upstream uncached
			}
			fresh = append(fresh, nf)
			f.c.ctr.missRequests.Add(1)
		}
	}
}
