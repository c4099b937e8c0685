package cache

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync/atomic"

	"sitebox/internal/store"
)

// fetch is one block coming from upstream. Readers that want the block
// while it is in flight wait on done and copy from buf; the disk writer
// holds a reference too, and the buffer returns to the RAM budget when the
// last reference goes.
type fetch struct {
	b    int
	gen  uint64
	buf  []byte
	done chan struct{}
	err  error
	refs atomic.Int32
}

func (f *fetch) unref(c *Cache) {
	if f.refs.Add(-1) == 0 {
		c.budget.put(f.buf)
	}
}

// slot is how one block of a read will be served.
type slot struct {
	b     int
	disk  bool     // present on disk, with its pages' CRC32Cs
	crcs  []uint32 // a copy: the map's may change once the lock is let go
	page  int64    // bytes per CRC
	f     *fetch   // in flight (joined or started)
	gen   uint64
	bytes int64 // block length
	// changed: the file was replaced while open and has no block b now.
	changed bool
	// fresh: this call created f; the caller launches it (see launch).
	fresh bool
}

// want decides how block b will be served and creates a fetch if needed
// (fresh: the caller launches it, with the other misses of its read).
// With no RAM left for a fetch it returns a slot with neither disk nor f:
// the caller reads that range from upstream uncached.
func (e *entry) want(b int) slot {
	c := e.c
	e.mu.Lock()
	defer e.mu.Unlock()
	if b >= e.m.blocks() {
		return slot{b: b, changed: true}
	}
	s := slot{b: b, gen: e.gen, bytes: e.m.blockLen(b)}
	if e.m.has(b) {
		s.disk, s.page = true, e.m.pageSize
		s.crcs = append([]uint32(nil), e.m.blockCRCs(b)...)
		c.ctr.hitRequests.Add(1)
		return s
	}
	if f := e.inflight[b]; f != nil {
		f.refs.Add(1)
		s.f = f
		c.ctr.coalescedWaits.Add(1)
		return s
	}
	c.ctr.missRequests.Add(1)
	s.f = e.newFetchLocked(b, 2)
	s.fresh = s.f != nil
	return s
}

// newFetchLocked creates a fetch of block b if RAM allows, for launch;
// refs is the number of references the fetch begins with (the writer's
// plus the caller's, if it will wait). Called with e.mu held.
func (e *entry) newFetchLocked(b, refs int) *fetch {
	buf := e.c.budget.get()
	if buf == nil {
		return nil
	}
	f := &fetch{b: b, gen: e.gen, buf: buf[:e.m.blockLen(b)], done: make(chan struct{})}
	f.refs.Store(int32(refs))
	if e.inflight == nil {
		e.inflight = map[int]*fetch{}
	}
	e.inflight[b] = f
	e.fetching.Add(1)
	e.c.acquire(e) // held by the fetch until its block is written or dropped
	return f
}

// fetched hands a fetched block (or its error) to waiting readers, then
// to the disk writer.
func (e *entry) fetched(f *fetch) {
	c := e.c
	e.fetching.Add(-1) // done with the upstream; the disk write may take longer
	close(f.done)
	if f.err != nil || !c.writeBehind(e, f) {
		e.finishFetch(f, false, nil)
	}
}

// finishFetch retires f: when written, the block becomes present (unless
// the cached copy was dropped meanwhile).
func (e *entry) finishFetch(f *fetch, written bool, crcs []uint32) {
	e.mu.Lock()
	if e.inflight[f.b] == f {
		delete(e.inflight, f.b)
	}
	if written && e.gen == f.gen && e.m != nil && len(crcs) == len(e.m.blockCRCs(f.b)) {
		e.m.set(f.b, crcs)
		e.dirty = true
	}
	e.mu.Unlock()
	f.unref(e.c)
	e.c.release(e)
}

// readSlot copies the part [from, to) of the slot's block into dst. A
// block on disk is read whole and checked against its CRC32C; a bad one is
// dropped and fetched again, never served.
func (e *entry) readSlot(s slot, dst []byte, from int64) error {
	c := e.c
	if s.changed {
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w: the file changed upstream while open", store.ErrIO)}
	}
	for try := 0; s.disk; try++ {
		ok, err := e.readDisk(s, dst, from)
		if err != nil || ok {
			return err
		}
		if try == 2 {
			return fmt.Errorf("cache: block %d of %s keeps failing its check", s.b, e.path)
		}
		s = e.want(s.b) // the bad block was dropped: fetch it again
		if s.fresh {
			e.launch([]*fetch{s.f})
		}
	}
	if s.f == nil {
		off := int64(s.b)*c.cfg.BlockSize + from
		if err := c.readUpstream(e, dst, off); err != nil {
			return err
		}
		c.ctr.bypassBytes.Add(int64(len(dst)))
		return nil
	}
	<-s.f.done
	defer s.f.unref(c)
	if s.f.err != nil {
		return s.f.err
	}
	copy(dst, s.f.buf[from:])
	c.ctr.missBytes.Add(int64(len(dst)))
	return nil
}

// readDisk serves a present block from the data file, reading and
// checking only the pages that hold [from, from+len(dst)). It reports
// false (and no error) when a page turned out bad and the block was
// dropped.
func (e *entry) readDisk(s slot, dst []byte, from int64) (bool, error) {
	c := e.c
	p0 := from / s.page
	p1 := (from + int64(len(dst)) + s.page - 1) / s.page
	lo, hi := p0*s.page, min(p1*s.page, s.bytes)
	// Reads under 1 MiB go through the page cache (see openRead), so a
	// reader picking baskets pays a copy, not a disk read; whole blocks of
	// 1 MiB and more (streaming) are read with O_DIRECT where writes use
	// it, into an aligned buffer. A read of whole pages through the page cache goes
	// straight to dst.
	buffered := !c.disk.direct || hi-lo < max(s.bytes, 1<<20)
	whole := from == lo && int64(len(dst)) == hi-lo && buffered
	buf := dst
	if !whole {
		pb := c.blockPool.Get().(*[]byte)
		defer c.blockPool.Put(pb)
		buf = (*pb)[:hi-lo]
		if !buffered {
			buf = (*pb)[:alignUp(hi-lo)]
		}
	}
	e.mu.Lock()
	data, err := e.dataFile()
	if err == nil && buffered && c.disk.direct {
		data, err = e.readFile()
	}
	e.mu.Unlock()
	if err == nil {
		var n int
		n, err = data.ReadAt(buf, int64(s.b)*c.cfg.BlockSize+lo)
		if int64(n) >= hi-lo && errors.Is(err, io.EOF) {
			err = nil
		}
		buf = buf[:min(int64(n), hi-lo)]
	}
	bad := err != nil || int64(len(buf)) != hi-lo
	for p := p0; !bad && p < p1; p++ {
		pg := buf[(p-p0)*s.page : min((p-p0+1)*s.page, int64(len(buf)))]
		bad = crc32.Checksum(pg, castagnoli) != s.crcs[p]
	}
	if !bad {
		if !whole {
			copy(dst, buf[from-lo:])
		}
		c.ctr.hitBytes.Add(int64(len(dst)))
		return true, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		e.diskFailed(err)
	}
	c.ctr.corruptBlocks.Add(1)
	c.log.Warn("cached block failed its CRC32C check; refetching", "path", e.path, "block", s.b, "err", err)
	e.mu.Lock()
	if e.gen == s.gen && e.m.has(s.b) && slices.Equal(e.m.blockCRCs(s.b), s.crcs) {
		e.m.clear(s.b)
		e.dirty = true
	}
	e.mu.Unlock()
	return false, nil
}
