package cache

import (
	"fmt"
	"io"
	"slices"

	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// Reading a cached file. Every read, ReadAt or Lend, goes the same way:
//
//  1. plan (File.plan): under one hold of the entry's lock, clip the read
//     to the file and follow the handle's access pattern (observe: is it
//     a stream? has it earned read-ahead?). A Lend is answered first,
//     where it can be, with bytes the entry holds: a fetch's buffer at
//     the offset (in flight, or kept in RAM after its write, keep.go), or
//     the mapped pages when all are checked and in the page cache. Any
//     other read is cut into pieces, each served from one place: a
//     fetch's buffer (joined, or started now for the misses), pages on
//     disk, or the upstream uncached when no RAM is left for a fetch. A
//     piece never crosses a block;
//  2. launch the fetches the plan started (fetch.go), in groups of one
//     upstream request each where they fit, and the read-ahead
//     (pattern.go);
//  3. serve the loan (lend.go), or the pieces in order: wait for a fetch
//     and copy its bytes, read and check pages on disk (checks.go), or
//     read upstream.
//
// A page on disk that fails its check is dropped and fetched again (at
// most twice), never served. A read returns exactly the upstream bytes
// or an error, never less than asked except at end of file (and, for a
// loan, where a fetch's buffer ends).

// source is where a piece of a read comes from.
type source uint8

const (
	fromDisk     source = iota // present pages, read (or copied from the page cache) and checked
	fromFetch                  // a fetch's buffer: in flight, or kept in RAM after its write
	fromUpstream               // no RAM for a fetch: read upstream uncached
	gone                       // the file was replaced while open and lacks these bytes now
)

// piece is how one range [off, end) of a read is served.
type piece struct {
	off, end int64
	from     source
	gen      uint64 // the cached copy's generation when planned
	// fromDisk: the pages [p0, p0+len(crcs)) holding the piece, with the
	// CRCs they had (a copy: the map's may change once the lock is let
	// go), page bytes each.
	p0   int
	crcs []uint32
	page int64
	// checked: every page passed its check since it was written, and
	// forgets is the map's count of forgotten checks then (checks.go).
	checked bool
	forgets uint64
	// fromFetch: the fetch, with a reference for the reader; kept says it
	// was kept in RAM after its write.
	f    *fetch
	kept bool
}

// readPlan is how one read is served (see File.plan).
type readPlan struct {
	size  int64 // the file's when planned: a read from there on is at its end
	end   int64 // the read is of [off, end)
	ahead bool  // the read earned read-ahead from end
	// A loan (File.Lend) of the bytes [off, end): a fetch's buffer, with
	// a reference for the borrower (kept: in RAM after its write), or the
	// mapped pages, checked and in the page cache.
	loan   *fetch
	kept   bool
	mapped *disk.Mapping
	// Else the pieces to read into the caller's buffer, and the fetches
	// the plan created for them, for the reader to launch.
	pieces []piece
	fresh  []*fetch
}

// lending says what a read may be answered with besides the caller's
// buffer (File.Lend): a fetch's buffer always; the mapped pages if
// mapped, carrying their CRCs, set in crcs, when it is not nil.
type lending struct {
	mapped bool
	crcs   []uint32
}

// ReadAt reads through the cache: every page the range touches is asked
// for at once (so the misses are fetched in parallel, in one upstream
// request where they fit), then copied out in order.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.usable(off); err != nil {
		return 0, err
	}
	pl := f.plan(off, int64(len(p)), nil)
	if off >= pl.size {
		return 0, io.EOF
	}
	return f.serveRead(pl, off, p, nil)
}

// usable refuses a read at off through a closed handle or at a negative
// offset.
func (f *File) usable(off int64) error {
	switch {
	case f.closed.Load():
		return &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: file is closed", store.ErrInvalid)}
	case off < 0:
		return &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: negative offset", store.ErrInvalid)}
	}
	return nil
}

// serveRead launches the plan's fetches and read-ahead, then serves its
// pieces into buf, which holds the file from off; out, if not nil,
// collects the CRCs of what is read.
func (f *File) serveRead(pl readPlan, off int64, buf []byte, out *crcOut) (int, error) {
	e := f.e
	e.launch(pl.fresh)
	if pl.ahead {
		f.readAheadFrom(pl.end)
	}
	if err := e.serve(pl.pieces, buf[:pl.end-off], off, 0, out); err != nil {
		return 0, err
	}
	if n := int(pl.end - off); n < len(buf) {
		return n, io.EOF
	}
	return len(buf), nil
}

// plan decides how the n bytes at off are served (see the top of this
// file), under one hold of the entry's lock: for a Lend (lend not nil), a
// loan of bytes the entry holds where it can (planLoanLocked), else the
// pieces to read. The fetches it creates for the misses are the
// caller's to launch.
func (f *File) plan(off, n int64, lend *lending) readPlan {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if m == nil || off >= m.Size() {
		return readPlan{size: e.sizeLocked(), end: off}
	}
	pl := readPlan{size: m.Size(), end: min(off+n, m.Size())}
	if lend != nil && f.planLoanLocked(&pl, off, lend) {
		_, pl.ahead = f.observe(off, pl.end)
		return pl
	}
	stream, ahead := f.observe(off, pl.end)
	pl.ahead = ahead
	pl.pieces, pl.fresh = e.piecesLocked(off, pl.end, stream)
	return pl
}

// piecesLocked cuts [off, end) into pieces and creates the fetches its
// missing pages need. fill widens the fetches to whole blocks: a
// sequential reader will want the rest of the block next, and one
// request for it costs less than many. Called with e.mu held.
func (e *entry) piecesLocked(off, end int64, fill bool) (pieces []piece, fresh []*fetch) {
	m := e.m
	if m == nil || end > m.Size() {
		return []piece{{off: off, end: end, from: gone}}, nil
	}
	ps := m.PageSize()
	pa, pb := m.PageRange(off, end)
	fa, fb := pa, pb
	if fill {
		fa, _ = m.BlockPages(pa / m.PagesPerBlock())
		_, fb = m.BlockPages((pb - 1) / m.PagesPerBlock())
	}
	fresh = e.fetchMissingLocked(fa, fb)
	e.c.ctr.missRequests.Add(int64(len(fresh)))
	ppb := m.PagesPerBlock()
	for p := pa; p < pb; {
		q := p + 1
		pc := piece{off: max(off, int64(p)*ps), gen: e.gen, page: ps, p0: p}
		fe := e.inflight[p]
		var kept *fetch
		if fe == nil && m.Has(p) {
			kept = e.keptLocked(p)
		}
		switch {
		case kept != nil:
			// On disk too, and still in RAM for the reader it was
			// fetched ahead of.
			for q < pb && q%ppb != 0 && q < kept.p0+kept.pagesOf(ps) && m.Has(q) {
				q++
			}
			pc.from, pc.f, pc.kept = fromFetch, kept, true
			e.c.ctr.hitRequests.Add(1)
		case m.Has(p):
			for q < pb && q%ppb != 0 && m.Has(q) {
				q++
			}
			pc.from, pc.crcs = fromDisk, m.CRCs(p, q)
			pc.checked, pc.forgets = m.Checked(p, q), m.Forgets()
			e.c.ctr.hitRequests.Add(1)
		case fe != nil:
			for q < pb && e.inflight[q] == fe {
				q++
			}
			fe.refs.Add(1)
			pc.from, pc.f = fromFetch, fe
			if !slices.Contains(fresh, fe) {
				e.c.ctr.coalescedWaits.Add(1)
			}
		default: // no RAM for a fetch: read through
			for q < pb && !m.Has(q) && e.inflight[q] == nil {
				q++
			}
			pc.from = fromUpstream
		}
		pc.end = min(end, int64(q)*ps)
		pieces = append(pieces, pc)
		p = q
	}
	return pieces, fresh
}

// serve copies the pieces' bytes into dst, which holds the file from
// offset base. depth counts the times pages that failed their check were
// fetched again. Every piece's fetch reference is released, served or
// not. out, if not nil, collects the CRCs of what is read.
func (e *entry) serve(pieces []piece, dst []byte, base int64, depth int, out *crcOut) error {
	var err error
	for _, pc := range pieces {
		if err != nil {
			if pc.f != nil {
				pc.f.unref(e.c)
			}
			continue
		}
		err = e.servePiece(pc, dst[pc.off-base:pc.end-base], depth, out)
	}
	return err
}

// servePiece serves one piece into dst.
func (e *entry) servePiece(pc piece, dst []byte, depth int, out *crcOut) error {
	c := e.c
	switch pc.from {
	case gone:
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w: the file changed upstream while open", store.ErrIO)}
	case fromFetch:
		return e.copyFetch(pc, dst, out)
	case fromUpstream:
		if err := e.up.ReadAt(dst, pc.off); err != nil {
			return err
		}
		c.ctr.bypassBytes.Add(int64(len(dst)))
		out.fill(pc.off, dst, nil, 0, 0)
		return nil
	}
	ok, err := e.readDisk(pc, dst, out)
	if err != nil || ok {
		return err
	}
	if depth == 2 {
		return fmt.Errorf("cache: page %d of %s keeps failing its check", pc.p0, e.path)
	}
	// The bad pages were dropped: fetch them again.
	e.mu.Lock()
	again, fresh := e.piecesLocked(pc.off, pc.end, false)
	e.mu.Unlock()
	e.launch(fresh)
	return e.serve(again, dst, pc.off, depth+1, out)
}

// copyFetch waits for the piece's fetch and copies its bytes, then gives
// the reader's reference back.
func (e *entry) copyFetch(pc piece, dst []byte, out *crcOut) error {
	<-pc.f.done
	defer pc.f.unref(e.c)
	if pc.f.err != nil {
		return pc.f.err
	}
	copy(dst, pc.f.buf[pc.off-pc.f.off:])
	e.c.ctr.servedFromFetch(pc.kept, int64(len(dst)))
	out.fill(pc.off, dst, pc.f.subs, pc.f.off, pc.f.end())
	pc.f.readFrom(e, pc.end)
	return nil
}
