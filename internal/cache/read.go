package cache

import (
	"fmt"
	"io"
	"slices"

	"sitebox/internal/store"
)

// Reading a cached file. Every read follows File.read from top to bottom:
//
//  1. plan (File.plan): under one hold of the entry's lock, clip the read
//     to the file, follow the handle's access pattern (observe: is it a
//     stream? has it earned read-ahead?) and cut the read into pieces,
//     each served from one place: a fetch's buffer (in flight, joined or
//     started for the misses now, or kept in RAM after its write, keep.go),
//     pages on disk, or the upstream uncached when no RAM is left for a
//     fetch. A piece never crosses a block;
//  2. launch the fetches the plan started (fetch.go), in groups of one
//     upstream request each where they fit, and the read-ahead
//     (pattern.go);
//  3. serve the pieces in order: wait for a fetch and copy its bytes,
//     read and check pages on disk (checks.go), or read upstream.
//
// A page on disk that fails its check is dropped and fetched again (at
// most twice), never served. The read returns exactly the upstream
// bytes or an error, never less than asked except at end of file.

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
	end    int64 // the read is of [off, end); end == off at end of file
	ahead  bool  // the read earned read-ahead from end
	pieces []piece
	fresh  []*fetch // fetches the plan created, for the reader to launch
}

// ReadAt reads through the cache: every page the range touches is asked
// for at once (so the misses are fetched in parallel, in one upstream
// request where they fit), then copied out in order.
func (f *File) ReadAt(p []byte, off int64) (int, error) { return f.read(p, off, nil) }

// ReadPagesAt is ReadAt that also sets crcs[i] to the CRC32C of the i-th
// kXR_pgread page of what it read (from off to the next multiple of 4
// KiB, then 4 KiB at a time), computed with the check of the cached
// pages rather than in a second pass. crcs must have room for them all.
func (f *File) ReadPagesAt(p []byte, off int64, crcs []uint32) (int, error) {
	if n := pgPages(off, int64(len(p))); len(crcs) < n {
		return 0, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: room for %d page CRCs, %d needed", store.ErrInvalid, len(crcs), n)}
	}
	return f.read(p, off, &pgOut{base: off, out: crcs})
}

// read is ReadAt, and ReadPagesAt when pg is not nil.
func (f *File) read(p []byte, off int64, pg *pgOut) (int, error) {
	if f.closed.Load() {
		return 0, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: file is closed", store.ErrInvalid)}
	}
	if off < 0 {
		return 0, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: negative offset", store.ErrInvalid)}
	}
	e := f.e
	pl := f.plan(off, int64(len(p)))
	if pl.end == off {
		return 0, io.EOF
	}
	e.launch(pl.fresh)
	if pl.ahead {
		f.readAheadFrom(pl.end)
	}
	if err := e.serve(pl.pieces, p[:pl.end-off], off, 0, pg); err != nil {
		return 0, err
	}
	if n := int(pl.end - off); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

// plan decides how the n bytes at off are served (see the top of this
// file), under one hold of the entry's lock. The fetches it creates for
// the misses are the caller's to launch.
func (f *File) plan(off, n int64) readPlan {
	e := f.e
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if m == nil || off >= m.Size() {
		return readPlan{end: off}
	}
	pl := readPlan{end: min(off+n, m.Size())}
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
// not. pg, if not nil, receives the pgread CRCs of what is read.
func (e *entry) serve(pieces []piece, dst []byte, base int64, depth int, pg *pgOut) error {
	var err error
	for _, pc := range pieces {
		if err != nil {
			if pc.f != nil {
				pc.f.unref(e.c)
			}
			continue
		}
		err = e.servePiece(pc, dst[pc.off-base:pc.end-base], depth, pg)
	}
	return err
}

// servePiece serves one piece into dst.
func (e *entry) servePiece(pc piece, dst []byte, depth int, pg *pgOut) error {
	c := e.c
	switch pc.from {
	case gone:
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w: the file changed upstream while open", store.ErrIO)}
	case fromFetch:
		return e.copyFetch(pc, dst, pg)
	case fromUpstream:
		if err := e.up.ReadAt(dst, pc.off); err != nil {
			return err
		}
		c.ctr.bypassBytes.Add(int64(len(dst)))
		pg.fill(pc.off, dst, nil, 0, 0)
		return nil
	}
	ok, err := e.readDisk(pc, dst, pg)
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
	return e.serve(again, dst, pc.off, depth+1, pg)
}

// copyFetch waits for the piece's fetch and copies its bytes, then gives
// the reader's reference back.
func (e *entry) copyFetch(pc piece, dst []byte, pg *pgOut) error {
	<-pc.f.done
	defer pc.f.unref(e.c)
	if pc.f.err != nil {
		return pc.f.err
	}
	copy(dst, pc.f.buf[pc.off-pc.f.off:])
	e.c.ctr.servedFromFetch(pc.kept, int64(len(dst)))
	pg.fill(pc.off, dst, pc.f.subs, pc.f.off, pc.f.end())
	pc.f.readFrom(e, pc.end)
	return nil
}
