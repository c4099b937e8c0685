package cache

import (
	"math"

	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// Lending pages (store.Viewer). Answering a vector read from pages in the
// page cache used to cost each segment a system call copying the bytes
// into the server's buffer, and the answer's writev a second copy into
// the socket. With the data file mapped, the root:// server hands the
// mapped pages to its writev, and the kernel copies them straight from
// the page cache into the socket: one copy per byte and one system call
// per segment fewer. Measured with 4 readers of 16 × 32 KiB vector reads
// from warm cached files, the server's CPU per vector read went from
// 106–112 µs to 74–79 µs (XCache 88–101 µs on the same files).
//
// Only pages that passed their check and are in the page cache right now
// are lent, the rule readResident follows: a page the kernel dropped must
// be read from disk and checked again, and mincore tells whether it is
// there. (A page dropped between that question and the writev would be
// read back unchecked; the window is the few microseconds in between.)
//
// A data file is mapped whole, read-only, for as long as it is open
// (closeFilesLocked unmaps it) and every handle that lent from it is
// open: lent bytes stay valid until the handle's Close, as store.Viewer
// promises. Data files are never shortened while open, only removed, and
// a removed file's mapping stays readable.

var _ store.Viewer = (*File)(nil)

// View lends the n bytes at off when they are all cached, checked and in
// the page cache (see above); otherwise it reports false and the caller
// reads them with ReadAt.
func (f *File) View(off int64, n int) ([]byte, bool) {
	return f.lend(off, n, nil)
}

// ViewPages is View for a pgread: it also sets crcs[i] to the CRC32C of
// the i-th 4 KiB page of the bytes lent, kept from the pages' check
// (blockmap.Map.KeepSubs), and lends nothing when they were not kept. off must be a
// multiple of 4 KiB, and n too unless the bytes end the file.
func (f *File) ViewPages(off int64, n int, crcs []uint32) ([]byte, bool) {
	if crcs == nil {
		return nil, false
	}
	return f.lend(off, n, crcs)
}

// lend is View, and ViewPages when crcs is not nil.
func (f *File) lend(off int64, n int, crcs []uint32) ([]byte, bool) {
	if f.closed.Load() || off < 0 || n <= 0 || off > math.MaxInt64-int64(n) {
		return nil, false
	}
	end := off + int64(n)
	mp := f.lendable(off, end, crcs)
	if mp == nil {
		return nil, false
	}
	if _, ahead := f.observe(off, end); ahead {
		f.readAheadFrom(end)
	}
	f.c.ctr.hitRequests.Add(1)
	f.c.ctr.hitBytes.Add(int64(n))
	return mp.Bytes(off, end), true
}

// lendable returns the mapping to lend bytes [off, end) from, or nil:
// the pages must be present, checked and in the page cache, and for a
// pgread (crcs not nil) their pgread CRCs kept, which it sets.
func (f *File) lendable(off, end int64, crcs []uint32) *disk.Mapping {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	mp := e.lendableLocked(off, end)
	if mp == nil || crcs != nil && !e.m.SubsOf(crcs, off, end) {
		return nil
	}
	if f.mm != mp {
		if f.mm != nil {
			// The handle lent from a data file since replaced (the file
			// changed upstream): ReadAt reports that.
			return nil
		}
		mp.Ref()
		f.mm = mp
	}
	// The descriptor is open while mp is the entry's mapping.
	if !mp.Resident(off, end) {
		return nil
	}
	return mp
}

// lendableLocked returns the mapping of the data file when pages [off,
// end) are all present and checked, mapping the file if need be, or nil.
// Called with e.mu held.
func (e *entry) lendableLocked(off, end int64) *disk.Mapping {
	m := e.m
	if m == nil || off < 0 || off >= end || end > m.Size() {
		return nil
	}
	pa, pb := int(off/m.PageSize()), int((end-1)/m.PageSize())+1
	for p := pa; p < pb; p++ {
		if !m.Has(p) {
			return nil
		}
	}
	if !m.Checked(pa, pb) {
		return nil
	}
	mp := e.data.Map(m.Size())
	if mp == nil || end > mp.Len() {
		return nil
	}
	return mp
}

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
