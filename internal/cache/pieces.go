package cache

import (
	"fmt"
	"slices"

	"sitebox/internal/store"
)

// The pieces of a read (step 1 and 3 at the top of read.go): the ranges
// of the read each served from one place, and how each is served.

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
