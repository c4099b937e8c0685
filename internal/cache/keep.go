package cache

import (
	"container/list"
	"sync"
)

// A block fetched ahead of a stream and written with O_DIRECT is not in
// the page cache: once written, its reader would read it back from disk,
// a disk read and a page-cache fill for bytes the cache held a moment
// before. A cold xrdcp through the cache read over a third of its bytes
// that way, and on a virtual machine the reads cost a fifth of the
// cache's CPU; they also filled the page cache with what the O_DIRECT
// writes keep out of it (what analysis jobs read stays there). So such a
// block's buffer is kept after the write until a
// reader has read to its end (a stream reads each block once), the file
// goes idle or is dropped, or newer kept blocks push it out: at most
// keepShare of the RAM budget is held so, oldest first out, so fetches
// always find room. Pages written through the page cache are not kept:
// the kernel holds them already.

// keepShare is the part of the RAM budget kept blocks may hold: a
// stream's read-ahead is 8 MiB, so a quarter of the default 1 GiB keeps
// the windows of 30 streams.
const keepShare = 4

// keeper holds the kept fetches, oldest first. A fetch is kept while it
// is on the list, which holds one reference to it: whoever takes it off
// (the reader that finished it, the file going idle, a newer block
// pushing it out) drops that reference, exactly once.
type keeper struct {
	mu    sync.Mutex
	limit int64
	bytes int64
	order list.List // of *fetch
}

// add keeps f, taking over a reference the caller holds, and lets the
// oldest kept fetches go while over the limit.
func (k *keeper) add(c *Cache, f *fetch) {
	k.mu.Lock()
	f.keptAt = k.order.PushBack(f)
	f.kept.Store(true)
	k.bytes += int64(cap(f.buf))
	var out []*fetch
	for k.bytes > k.limit {
		v := k.order.Front().Value.(*fetch)
		k.removeLocked(v)
		out = append(out, v)
	}
	k.mu.Unlock()
	for _, v := range out {
		v.unref(c)
	}
}

// remove lets f go if it is kept.
func (k *keeper) remove(c *Cache, f *fetch) {
	k.mu.Lock()
	was := f.keptAt != nil
	if was {
		k.removeLocked(f)
	}
	k.mu.Unlock()
	if was {
		f.unref(c)
	}
}

func (k *keeper) removeLocked(f *fetch) {
	k.order.Remove(f.keptAt)
	f.keptAt = nil
	f.kept.Store(false)
	k.bytes -= int64(cap(f.buf))
}

// held is the RAM kept fetches hold.
func (k *keeper) held() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bytes
}

// keepLocked keeps f, just written with O_DIRECT, for its reader, unless
// a reader has read it to its end already. Called with e.mu held, with
// the writer's reference, which the keeper takes over; it reports
// whether it did. A block has one kept fetch at most (a fetch never
// crosses a block), so the entry's table of them stays as small as its
// block count however long a stream runs.
func (e *entry) keepLocked(f *fetch) bool {
	c := e.c
	if c.keep.limit < int64(cap(f.buf)) || f.readTo.Load() >= f.end() {
		return false
	}
	if e.kept == nil {
		e.kept = map[int]*fetch{}
	}
	b := f.p0 / e.m.PagesPerBlock()
	if old := e.kept[b]; old != nil {
		c.keep.remove(c, old)
	}
	e.kept[b] = f
	c.keep.add(c, f)
	// A reader that finished f meanwhile saw it not yet kept (it marks
	// readTo before looking at kept, and add marks kept before this looks
	// at readTo): let it go here.
	if f.readTo.Load() >= f.end() {
		c.keep.remove(c, f)
		delete(e.kept, b)
	}
	return true
}

// keptLocked returns the kept fetch holding page p of the current copy,
// with a reference for the caller, or nil. Called with e.mu held.
func (e *entry) keptLocked(p int) *fetch {
	b := p / e.m.PagesPerBlock()
	f := e.kept[b]
	if f == nil || p < f.p0 || p >= f.p0+f.pagesOf(e.m.PageSize()) {
		return nil
	}
	// One let go since (pushed out by newer ones) is forgotten here.
	if f.gen != e.gen || !f.kept.Load() || !f.tryRef() {
		delete(e.kept, b)
		return nil
	}
	return f
}

// unkeepLocked lets go of every fetch kept for e: the file is idle or
// dropped. Called with e.mu held.
func (e *entry) unkeepLocked() {
	for _, f := range e.kept {
		e.c.keep.remove(e.c, f)
	}
	e.kept = nil
}

// readFrom records that a reader of e read f up to end, and lets f go if
// kept and read to its end.
func (f *fetch) readFrom(e *entry, end int64) {
	for {
		prev := f.readTo.Load()
		if end <= prev || f.readTo.CompareAndSwap(prev, end) {
			break
		}
	}
	if end < f.end() || !f.kept.Load() {
		return
	}
	e.c.keep.remove(e.c, f)
	e.mu.Lock()
	if e.m != nil {
		if b := f.p0 / e.m.PagesPerBlock(); e.kept[b] == f {
			delete(e.kept, b)
		}
	}
	e.mu.Unlock()
}

// tryRef takes a reference unless the last one is gone (the buffer may
// be back in the pool).
func (f *fetch) tryRef() bool {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return false
		}
		if f.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}
