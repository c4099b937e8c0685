package cache

// Borrowing a fetch's buffer. A pgread of bytes still in a fetch's
// buffer (fetched for it, or kept for the stream it was fetched ahead of,
// keep.go) used to copy them into the server's buffer, which the writev
// then copied into the socket. Lent instead, with the pgread CRCs the
// fetch computed, they are copied once: on a cold stream through the
// cache that copy was a tenth of the cache's CPU. The buffer is held by
// a reference until the caller's done, so it cannot go back to the pool
// while the socket write reads it.

// BorrowPages lends the bytes at off, up to n of them, from the buffer
// of the fetch holding them (waiting for it if still in flight), with
// their pgread CRCs in crcs; done gives the buffer back. It may lend
// fewer bytes than n where a fetch ends (at a block's end) and the file
// goes on; it lends nothing that would stop short of n at the file's
// end, which a reader must learn as end of file (from ReadPagesAt). ok
// is false when no fetch holds the bytes at off, or it failed: the
// caller then reads them with ReadPagesAt. off must be a multiple of 4
// KiB; crcs must have room for n's pages.
func (f *File) BorrowPages(off int64, n int, crcs []uint32) (b []byte, done func(), ok bool) {
	if off%pgPage != 0 || n <= 0 || len(crcs) < pgPages(off, int64(n)) {
		return nil, nil, false
	}
	return f.borrow(off, n, crcs)
}

// Borrow is BorrowPages for a plain read (kXR_read): any offset, no CRCs.
func (f *File) Borrow(off int64, n int) (b []byte, done func(), ok bool) {
	return f.borrow(off, n, nil)
}

// borrow is Borrow, and BorrowPages when crcs is not nil.
func (f *File) borrow(off int64, n int, crcs []uint32) (b []byte, done func(), ok bool) {
	if f.closed.Load() || off < 0 || n <= 0 {
		return nil, nil, false
	}
	e, c := f.e, f.c
	fe, kept, size := e.borrowFetch(off)
	if fe == nil {
		return nil, nil, false
	}
	end := min(off+int64(n), fe.end())
	if end < off+int64(n) && end >= size {
		fe.unref(c)
		return nil, nil, false
	}
	// Read-ahead starts before waiting for the fetch, as for ReadAt.
	if _, ahead := f.observe(off, end); ahead {
		f.readAheadFrom(end)
	}
	<-fe.done
	if fe.err != nil || crcs != nil && len(fe.subs) < pgPages(fe.off, int64(len(fe.buf))) {
		fe.unref(c)
		return nil, nil, false
	}
	if crcs != nil {
		first := (off - fe.off) / pgPage
		copy(crcs, fe.subs[first:first+int64(pgPages(off, end-off))])
	}
	if kept {
		c.ctr.hitRequests.Add(1)
	}
	c.ctr.servedFromFetch(kept, end-off)
	fe.readFrom(e, end)
	return fe.buf[off-fe.off : end-fe.off : end-fe.off], func() { fe.unref(c) }, true
}

// borrowFetch returns the fetch holding the byte at off, in flight or
// kept, with a reference for the caller, or nil; and the file's size.
func (e *entry) borrowFetch(off int64) (f *fetch, kept bool, size int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if m == nil || off >= m.Size() {
		return nil, false, 0
	}
	p := int(off / m.PageSize())
	if f = e.inflight[p]; f != nil {
		f.refs.Add(1)
		e.c.ctr.coalescedWaits.Add(1)
		return f, false, m.Size()
	}
	if m.Has(p) {
		if f = e.keptLocked(p); f != nil {
			return f, true, m.Size()
		}
	}
	return nil, false, 0
}
