package cache

import (
	"fmt"
	"io"

	"sitebox/internal/cache/blockmap"
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
//     the mapped pages when all are checked and in the page cache
//     (lend.go). Any other read is cut into pieces (pieces.go), each
//     served from one place: a fetch's buffer (joined, or started now for
//     the misses), pages on disk, or the upstream uncached when no RAM is
//     left for a fetch. A piece never crosses a block;
//  2. launch the fetches the plan started (fill.go), in groups of one
//     upstream request each where they fit, and the read-ahead
//     (pattern.go);
//  3. serve the loan (lend.go), or the pieces in order (pieces.go): wait
//     for a fetch and copy its bytes, read and check pages on disk
//     (checks.go), or read upstream.
//
// A page on disk that fails its check is dropped and fetched again (at
// most twice), never served. A read returns exactly the upstream bytes
// or an error, never less than asked except at end of file (and, for a
// loan, where a fetch's buffer ends).

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

// Lend answers a read of up to len(buf) bytes at off (store.Lender): a
// loan of bytes the file holds where the planner finds them (File.plan),
// else a read into buf, as ReadAt reads.
func (f *File) Lend(off int64, buf []byte, opts store.LendOptions) (store.Loan, error) {
	if err := f.usable(off); err != nil {
		return store.Loan{}, err
	}
	if len(buf) == 0 {
		return store.Lent(buf, nil, nil), nil
	}
	var out *crcOut
	lend := &lending{mapped: opts.Mapped}
	switch {
	case opts.CRCs == nil:
	case off%store.CRCPage != 0:
		// No CRCs from here: the caller computes them, which it may not
		// from mapped pages.
		lend.mapped = false
	case len(opts.CRCs) < blockmap.Subs(int64(len(buf))):
		return store.Loan{}, &store.PathError{Op: "read", Path: f.e.path, Err: fmt.Errorf("%w: room for %d CRCs, %d needed", store.ErrInvalid, len(opts.CRCs), blockmap.Subs(int64(len(buf))))}
	default:
		out = &crcOut{base: off, out: opts.CRCs}
		lend.crcs = opts.CRCs
	}
	pl := f.plan(off, int64(len(buf)), lend)
	if off >= pl.size {
		return store.Loan{}, io.EOF
	}
	if pl.loan != nil || pl.mapped != nil {
		if pl.ahead {
			f.readAheadFrom(pl.end)
		}
		if loan, ok := f.lent(pl, off, out); ok {
			return loan, atEnd(pl, off, len(buf))
		}
		// The fetch failed: read the bytes as ReadAt would (the access
		// pattern has seen this read already).
		pl = f.replan(off, min(off+int64(len(buf)), pl.size))
	}
	n, err := f.serveRead(pl, off, buf, out)
	if err != nil && err != io.EOF {
		return store.Loan{}, err
	}
	return store.Lent(buf[:n], out.upTo(off+int64(n)), nil), err
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
		f.caughtUp(&pl)
		return pl
	}
	stream, ahead := f.observe(off, pl.end)
	pl.ahead = ahead
	pl.pieces, pl.fresh = e.piecesLocked(off, pl.end, stream)
	f.caughtUp(&pl)
	return pl
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

// atEnd is io.EOF when a loan of [off, pl.end) stops short of the n bytes
// asked at the end of the file, else nil.
func atEnd(pl readPlan, off int64, n int) error {
	if pl.end == pl.size && pl.end < off+int64(n) {
		return io.EOF
	}
	return nil
}
