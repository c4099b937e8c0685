package cache

import (
	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// Lending (store.Lender). A server answering a read used to copy the
// bytes into its buffer, which its writev then copied into the socket.
// Lent instead, they are copied once, by the kernel:
//
//   - from a fetch's buffer, in flight or kept in RAM after its write
//     for the stream it was fetched ahead of (keep.go), with the CRCs
//     computed as it arrived: on a cold stream through the cache that
//     copy was a tenth of the cache's CPU. The buffer is held by a
//     reference until the loan is released, so it cannot go back to the
//     pool while the socket write reads it;
//   - from the data file's mapping (disk.Mapping), for pages that passed
//     their check and are in the page cache right now, the rule
//     copyChecked follows (a page the kernel dropped must be read from
//     disk and checked again; one dropped between that question and the
//     writev would be read back unchecked, in a window of a few
//     microseconds). Measured with 4 readers of 16 × 32 KiB vector reads
//     from warm cached files, the server's CPU per vector read went from
//     106–112 µs to 74–79 µs (XCache 88–101 µs on the same files). With
//     CRCs asked, only pages whose 4 KiB CRCs were kept from their check
//     are lent (blockmap.Map.KeepSubs): the caller may not read mapped
//     bytes to compute them.
//
// Lent bytes stay valid until the loan is released; a mapping stays
// until the handle that lent from it is closed.

var _ store.Lender = (*File)(nil)

// planLoanLocked plans a loan of the bytes [off, pl.end) the entry holds:
// the buffer of a fetch holding the byte at off, in flight or kept, up to
// its end; else, as lend allows, the mapped pages when every one is
// present, checked and in the page cache. It reports false when neither
// holds them. Called with e.mu held.
func (f *File) planLoanLocked(pl *readPlan, off int64, lend *lending) bool {
	e := f.e
	m := e.m
	p := int(off / m.PageSize())
	if fe := e.inflight[p]; fe != nil {
		fe.refs.Add(1)
		e.c.ctr.coalescedWaits.Add(1)
		pl.loan, pl.end = fe, min(pl.end, fe.end())
		return true
	}
	if m.Has(p) {
		if fe := e.keptLocked(p); fe != nil {
			pl.loan, pl.kept, pl.end = fe, true, min(pl.end, fe.end())
			return true
		}
	}
	if lend.mapped {
		pl.mapped = f.mappedLocked(off, pl.end, lend.crcs)
	}
	return pl.mapped != nil
}

// mappedLocked returns the mapping to lend bytes [off, end) from, or nil:
// the pages must be present, checked and in the page cache, and, when
// crcs is not nil, their 4 KiB CRCs kept, which it sets. The handle
// holds a reference to the mapping until it closes. Called with e.mu
// held.
func (f *File) mappedLocked(off, end int64, crcs []uint32) *disk.Mapping {
	e := f.e
	m := e.m
	pa, pb := m.PageRange(off, end)
	for p := pa; p < pb; p++ {
		if !m.Has(p) {
			return nil
		}
	}
	if !m.Checked(pa, pb) {
		return nil
	}
	mp := e.data.Map(m.Size())
	if mp == nil || end > mp.Len() || crcs != nil && !m.SubsOf(crcs, off, end) {
		return nil
	}
	if f.mm != mp {
		if f.mm != nil {
			// The handle lent from a data file since replaced (the file
			// changed upstream): a read reports that.
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

// lent serves a planned loan: the mapped pages, or the fetch's bytes
// once it has them. It reports false when the fetch failed (its
// reference given back).
func (f *File) lent(pl readPlan, off int64, out *crcOut) (store.Loan, bool) {
	c := f.c
	if pl.mapped != nil {
		c.ctr.hitRequests.Add(1)
		c.ctr.hitBytes.Add(pl.end - off)
		return store.Lent(pl.mapped.Bytes(off, pl.end), out.upTo(pl.end), nil), true
	}
	fe := pl.loan
	<-fe.done
	if fe.err != nil {
		fe.unref(c)
		return store.Loan{}, false
	}
	b := fe.buf[off-fe.off : pl.end-fe.off : pl.end-fe.off]
	out.fill(off, b, fe.subs, fe.off, fe.end())
	if pl.kept {
		c.ctr.hitRequests.Add(1)
	}
	c.ctr.servedFromFetch(pl.kept, pl.end-off)
	fe.readFrom(f.e, pl.end)
	return store.Lent(b, out.upTo(pl.end), func() { fe.unref(c) }), true
}

// replan plans [off, end) as pieces to read, without following the
// access pattern again.
func (f *File) replan(off, end int64) readPlan {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	pl := readPlan{size: e.sizeLocked(), end: end}
	pl.pieces, pl.fresh = e.piecesLocked(off, end, false)
	return pl
}
