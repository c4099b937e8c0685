package cache

import (
	"errors"
	"io"
	"os"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/disk"
)

// Checks once per trip from disk. A page's CRC32C is checked when its
// bytes are read from the data file; the kernel's page cache then holds
// the bytes that passed, so a later small read of the page, while it is
// still in the page cache, copies just the bytes asked for and skips the
// check (XCache checks nothing at all). A page the cache wrote through
// the page cache counts as checked from the start: the kernel holds the
// bytes its CRC was computed from. What the CRCs guard against, bytes
// gone bad on the device or a map ahead of its data after a crash,
// happens beneath the page cache: a page the kernel dropped is read from
// disk again, and so checked again, because the question whether it is
// resident (residentNow), asked before the resident-only read below,
// says no, and the page's check is forgotten at once (the same when the
// read itself fails: it may have started bringing the page back).
//
// So that no reader takes bytes read back from disk for checked ones,
// every read that may come from disk forgets its pages' checks before it
// starts (readDisk; streams, for the pages the kernel's read-ahead may
// reach), and a read that found its pages checked when it was planned
// copies them only if no check of the file was forgotten since
// (blockmap.Map.Forgets, stillChecked): its plan and its copy can be far
// apart, with another part of the read waiting for upstream.
//
// The checked bits live in memory only (a restart checks every page
// again; an idle file's index record keeps its bits, so a job opening it
// again does not) and are cleared whenever a page is dropped or
// replaced.

// readDisk serves a piece of present pages from the data file. Pages
// that passed their check and are still in the page cache are copied as
// asked (copyChecked); otherwise the pages holding the piece are read
// and checked (readChecked). It reports false (and no error) when a page
// turned out bad and was dropped.
func (e *entry) readDisk(pc piece, dst []byte, out *crcOut) (bool, error) {
	lo := int64(pc.p0) * pc.page
	hi := min(lo+int64(len(pc.crcs))*pc.page, e.size())
	data, err := e.diskReader(pc, hi-lo)
	if err != nil {
		return e.dropBad(pc, lo, nil, err)
	}
	// A reader wanting the pages' CRCs (a pgread) reads and checks them,
	// and keeps the CRCs, so the next such reader of these pages can
	// borrow the pages with them instead (File.Lend,
	// blockmap.Map.KeepSubs).
	startedDisk := false
	if pc.checked && out == nil {
		var ok bool
		if ok, startedDisk = e.copyChecked(pc, data, dst); ok {
			return true, nil
		}
		pc.checked = false // read and checked below
	}
	return e.readChecked(pc, data, lo, hi, startedDisk, dst, out)
}

// copyChecked copies the piece's bytes from the page cache, unchecked,
// if they are all there and still count as checked once copied (see
// above). startedDisk says a resident-only read found bytes missing and
// may have started reading them from disk.
func (e *entry) copyChecked(pc piece, data *os.File, dst []byte) (ok, startedDisk bool) {
	if !e.residentNow(data, pc.off, pc.end) {
		return false, false
	}
	ok, missing := e.c.disk.ReadResident(data, dst, pc.off)
	if ok && e.stillChecked(pc) {
		e.c.ctr.hitBytes.Add(int64(len(dst)))
		return true, false
	}
	return false, missing
}

// readChecked reads the pages [lo, hi) holding the piece and checks
// them, then copies the piece's bytes to dst. Every read goes through the
// page cache, whether or not writes bypass it: a reader picking baskets
// pays a copy, not a disk read, and streams read ahead (see diskReader).
// A read of whole pages goes straight to dst.
func (e *entry) readChecked(pc piece, data *os.File, lo, hi int64, startedDisk bool, dst []byte, out *crcOut) (bool, error) {
	c := e.c
	whole := pc.off == lo && int64(len(dst)) == hi-lo
	buf := dst
	if !whole {
		pb := c.blockPool.Get().(*[]byte)
		defer c.blockPool.Put(pb)
		buf = (*pb)[:hi-lo]
	}
	var err error
	if hi > lo {
		// What comes from disk may be the bad bytes the checks guard
		// against: while they are in the page cache, no reader may take
		// them for checked ones, so their checks are forgotten first.
		// Pages in the page cache are read as they are: forgetting their
		// checks would send every read planned meanwhile here too.
		if startedDisk || !e.residentNow(data, lo, hi) {
			e.uncheckPiece(pc)
			pc.checked = false
		}
		var n int
		n, err = data.ReadAt(buf, lo)
		if int64(n) >= hi-lo && errors.Is(err, io.EOF) {
			err = nil
		}
		buf = buf[:min(int64(n), hi-lo)]
	}
	bad, nbad, subs := blockmap.Verify(pc.crcs, pc.page, buf, err, out != nil)
	if nbad != 0 || int64(len(buf)) != hi-lo {
		return e.dropBad(pc, lo, bad, err)
	}
	if !whole {
		copy(dst, buf[pc.off-lo:])
	}
	if !pc.checked || subs != nil {
		e.markChecked(pc, subs)
	}
	c.ctr.hitBytes.Add(int64(len(dst)))
	out.fill(pc.off, dst, subs, lo, hi)
	return true, nil
}

// dropBad drops the piece's pages that failed their check (bad[i] for
// the i-th; all of them for a nil bad), unless they changed since it
// was planned, so they are fetched again; a read error err is the
// disk's to report. It reports false: the piece was not served.
func (e *entry) dropBad(pc piece, lo int64, bad []bool, err error) (bool, error) {
	if err != nil && !errors.Is(err, io.EOF) {
		e.diskFailed(err)
	}
	nbad := len(pc.crcs)
	if bad != nil {
		nbad = 0
		for _, b := range bad {
			if b {
				nbad++
			}
		}
	}
	e.c.ctr.corruptBlocks.Add(1)
	e.c.log.Warn("cached pages failed their CRC32C check; refetching", "path", e.path, "offset", lo, "bad_pages", nbad, "err", err)
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := range pc.crcs {
		p := pc.p0 + i
		if (bad == nil || bad[i]) && e.gen == pc.gen && e.m != nil && p < e.m.Pages() && e.m.Has(p) && e.m.CRC(p) == pc.crcs[i] {
			e.m.Clear(p)
			e.dirty = true
		}
	}
	return false, nil
}

// diskReader returns the descriptor to read n bytes of piece pc with: the
// streams' reader for a stream, whose read-ahead first forgets the checks
// of the pages it may reach (disk/stream.go), else the buffered reader.
func (e *entry) diskReader(pc piece, n int64) (*os.File, error) {
	c := e.c
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case n >= disk.StreamMin && c.disk.StreamReach() > 0:
		e.uncheckAheadLocked(pc.p0 + len(pc.crcs))
		return e.streamFile()
	case c.disk.Direct():
		return e.readFile()
	default:
		return e.dataFile()
	}
}

// markChecked records that the piece's pages passed their check, with
// their pgread CRCs if the check computed them (subs, else nil), unless
// they changed since it was planned.
func (e *entry) markChecked(pc piece, subs []uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if e.gen != pc.gen || m == nil || pc.p0+len(pc.crcs) > m.Pages() {
		return
	}
	for i, crc := range pc.crcs {
		if p := pc.p0 + i; !m.Has(p) || m.CRC(p) != crc {
			return
		}
	}
	m.MarkChecked(pc.p0, pc.p0+len(pc.crcs))
	m.KeepSubs(e.c.subs, pc.p0, subs)
}

// stillChecked reports whether no check of the file was forgotten since
// piece pc was planned: pages it found checked were not read from disk
// meanwhile (a read from disk forgets their checks first), so bytes
// copied from the page cache since are the ones that passed.
func (e *entry) stillChecked(pc piece) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen == pc.gen && e.m != nil && e.m.Forgets() == pc.forgets
}

// residentNow reports whether the page cache holds bytes [off, end) of
// the data file f right now, asking without reading. readResident alone
// is not enough: its RWF_NOWAIT read of a page that is not there starts
// reading it from disk, and when the disk answers before the kernel
// looks again the read returns it. A page dropped and then read back
// that way came back unchecked: a corrupt byte on disk was served about
// once in 150 runs of TestCorruptBlockIsRefetched on this virtual disk.
// Asked with cachestat on f (Linux 6.5 on), else with mincore on the
// entry's mapping, made if need be. A page dropped between the question
// and the read is the window of a few microseconds lending has too.
func (e *entry) residentNow(f *os.File, off, end int64) bool {
	if ok, asked := e.c.disk.ResidentFD(f, off, end); asked {
		return ok
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.data.Resident(e.sizeLocked(), off, end)
}

// uncheckPiece forgets the checks of the piece's pages, unless they changed
// since it was planned.
func (e *entry) uncheckPiece(pc piece) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen != pc.gen || e.m == nil || pc.p0+len(pc.crcs) > e.m.Pages() {
		return
	}
	e.m.UncheckRange(pc.p0, pc.p0+len(pc.crcs))
}

// uncheckAheadLocked forgets the checks of the pages from page p on that
// a stream read may bring into the page cache by read-ahead. Called with
// e.mu held.
func (e *entry) uncheckAheadLocked(p int) {
	m := e.m
	if m == nil {
		return
	}
	m.UncheckRange(p, min(p+int((e.c.disk.StreamReach()+m.PageSize()-1)/m.PageSize()), m.Pages()))
}
