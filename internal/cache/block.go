package cache

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// fetch is a run of pages of one block coming from upstream. Readers
// that want them while in flight wait on done and copy from buf; the disk
// writer holds a reference too, and the buffer returns to the RAM budget
// when the last reference goes.
type fetch struct {
	p0   int   // first page
	off  int64 // file offset of buf[0]
	gen  uint64
	buf  []byte
	done chan struct{}
	err  error
	refs atomic.Int32
	// subs are the CRC32Cs of buf's pgPages, set before done is closed:
	// the writer combines them into the map's page CRCs, and a pgread
	// served from buf sends them.
	subs []uint32
	// readTo is how far readers have read buf; kept and keptAt say it is
	// kept in RAM after its write (keep.go; keptAt guarded by keeper.mu).
	readTo atomic.Int64
	kept   atomic.Bool
	keptAt *list.Element
}

func (f *fetch) unref(c *Cache) {
	if f.refs.Add(-1) == 0 {
		c.budget.put(f.buf)
	}
}

// slot is how one piece [off, end) of a read will be served: from disk,
// from a fetch (joined or started), or, with neither, from upstream
// uncached (no RAM left for a fetch). A slot never crosses a block.
type slot struct {
	off, end int64
	disk     bool     // present on disk, with its pages' CRC32Cs
	p0       int      // first page (disk)
	crcs     []uint32 // a copy: the map's may change once the lock is let go
	page     int64    // bytes per CRC
	checked  bool     // disk: every page passed its check since written
	forgets  uint64   // disk: the map's forgotten checks when planned
	f        *fetch
	gen      uint64
	kept     bool // f is kept in RAM after its write (keep.go)
	// changed: the file was replaced while open and lacks these bytes now.
	changed bool
}

// plan decides how [off, end) will be served and creates the fetches its
// missing pages need, which the caller launches (with the other misses
// of its read). fill widens the fetches to whole blocks: a sequential
// reader will want the rest of the block next, and one request for it
// costs less than many.
func (e *entry) plan(off, end int64, fill bool) (slots []slot, fresh []*fetch) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if m == nil || end > m.Size() {
		return []slot{{off: off, end: end, changed: true}}, nil
	}
	ps := m.PageSize()
	pa, pb := int(off/ps), int((end-1)/ps)+1
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
		s := slot{off: max(off, int64(p)*ps), gen: e.gen, page: ps, p0: p}
		f := e.inflight[p]
		var kept *fetch
		if f == nil && m.Has(p) {
			kept = e.keptLocked(p)
		}
		switch {
		case kept != nil:
			// On disk too, and still in RAM for the reader it was
			// fetched ahead of.
			for q < pb && q%ppb != 0 && q < kept.p0+kept.pagesOf(ps) && m.Has(q) {
				q++
			}
			s.f, s.kept = kept, true
			e.c.ctr.hitRequests.Add(1)
		case m.Has(p):
			s.disk = true
			for q < pb && q%ppb != 0 && m.Has(q) {
				q++
			}
			s.crcs = m.CRCs(p, q)
			s.checked, s.forgets = m.Checked(p, q), m.Forgets()
			e.c.ctr.hitRequests.Add(1)
		case f != nil:
			for q < pb && e.inflight[q] == f {
				q++
			}
			f.refs.Add(1)
			s.f = f
			if !isFresh(fresh, f) {
				e.c.ctr.coalescedWaits.Add(1)
			}
		default: // no RAM for a fetch: read through
			for q < pb && !m.Has(q) && e.inflight[q] == nil {
				q++
			}
		}
		s.end = min(end, int64(q)*ps)
		slots = append(slots, s)
		p = q
	}
	return slots, fresh
}

func isFresh(fresh []*fetch, f *fetch) bool {
	for _, g := range fresh {
		if g == f {
			return true
		}
	}
	return false
}

// fetchMissingLocked creates fetches for the pages in [from, to) neither
// present nor in flight: one per run of such pages within a block, as
// RAM allows. Each begins with one reference, the disk writer's. Called
// with e.mu held.
func (e *entry) fetchMissingLocked(from, to int) []*fetch {
	m := e.m
	ppb := m.PagesPerBlock()
	var fresh []*fetch
	for p := from; p < to && p < m.Pages(); {
		if m.Has(p) || e.inflight[p] != nil {
			p++
			continue
		}
		q := p + 1
		for q < to && q < m.Pages() && q%ppb != 0 && !m.Has(q) && e.inflight[q] == nil {
			q++
		}
		f := e.newFetchLocked(p, q)
		if f == nil {
			break // out of RAM: clients come first
		}
		fresh = append(fresh, f)
		p = q
	}
	return fresh
}

// newFetchLocked creates a fetch of pages [p0, p1) if RAM allows, for
// launch, with one reference (the writer's). Called with e.mu held.
func (e *entry) newFetchLocked(p0, p1 int) *fetch {
	m := e.m
	off := int64(p0) * m.PageSize()
	n := min(int64(p1)*m.PageSize(), m.Size()) - off
	buf := e.c.budget.get(n)
	if buf == nil {
		return nil
	}
	f := &fetch{p0: p0, off: off, gen: e.gen, buf: buf, done: make(chan struct{})}
	f.refs.Store(1)
	if e.inflight == nil {
		e.inflight = map[int]*fetch{}
	}
	for p := p0; p < p1; p++ {
		e.inflight[p] = f
	}
	e.fetching.Add(1)
	e.c.acquire(e) // held by the fetch until its pages are written or dropped
	return f
}

// pagesOf is the number of pages f covers.
func (f *fetch) pagesOf(page int64) int { return int((int64(len(f.buf)) + page - 1) / page) }

// fetched hands fetched pages (or the error) to waiting readers, then to
// the disk writer.
func (e *entry) fetched(f *fetch) {
	c := e.c
	e.fetching.Add(-1) // done with the upstream; the disk write may take longer
	if f.err == nil {
		f.subs = blockmap.SubCRCs(f.subs[:0], f.buf)
	}
	close(f.done)
	if f.err != nil || !c.writeBehind(e, f) {
		e.finishFetch(f, false, false, nil)
	}
}

// finishFetch retires f: when written, its pages become present (unless
// the cached copy was dropped meanwhile). Pages written through the page
// cache count as checked (checked.go): the kernel holds the bytes their
// CRCs were computed from, so the next small read of them is a plain
// copy rather than a read and check of whole pages.
func (e *entry) finishFetch(f *fetch, written, buffered bool, crcs []uint32) {
	e.mu.Lock()
	if e.m != nil {
		for p := f.p0; p < f.p0+f.pagesOf(e.m.PageSize()); p++ {
			if e.inflight[p] == f {
				delete(e.inflight, p)
			}
		}
	}
	kept := false
	if written && e.gen == f.gen && e.m != nil && f.p0+len(crcs) <= e.m.Pages() {
		e.m.SetPages(f.p0, crcs)
		if buffered {
			e.m.MarkChecked(f.p0, f.p0+len(crcs))
			e.m.KeepSubs(e.c.subs, f.p0, f.subs)
		} else {
			kept = e.keepLocked(f)
		}
		e.dirty = true
	}
	e.mu.Unlock()
	if !kept {
		f.unref(e.c)
	}
	e.c.release(e)
}

// readSlots copies the slots' bytes into dst, which holds the file from
// offset base. A page on disk is checked against its CRC32C; a bad one is
// dropped and fetched again (at most twice), never served. Every slot's
// fetch reference is released, read or not.
// pg, if not nil, receives the pgread CRCs of what is read.
func (e *entry) readSlots(slots []slot, dst []byte, base int64, depth int, pg *pgOut) error {
	var err error
	for _, s := range slots {
		if err != nil {
			if s.f != nil {
				s.f.unref(e.c)
			}
			continue
		}
		err = e.readSlot(s, dst[s.off-base:s.end-base], depth, pg)
	}
	return err
}

func (e *entry) readSlot(s slot, dst []byte, depth int, pg *pgOut) error {
	c := e.c
	switch {
	case s.changed:
		return &store.PathError{Op: "read", Path: e.path, Err: fmt.Errorf("%w: the file changed upstream while open", store.ErrIO)}
	case s.disk:
		ok, err := e.readDisk(s, dst, pg)
		if err != nil || ok {
			return err
		}
		if depth == 2 {
			return fmt.Errorf("cache: page %d of %s keeps failing its check", s.p0, e.path)
		}
		// The bad pages were dropped: fetch them again.
		again, fresh := e.plan(s.off, s.end, false)
		e.launch(fresh)
		return e.readSlots(again, dst, s.off, depth+1, pg)
	case s.f == nil:
		if err := e.up.ReadAt(dst, s.off); err != nil {
			return err
		}
		c.ctr.bypassBytes.Add(int64(len(dst)))
		pg.fill(s.off, dst, nil, 0, 0)
		return nil
	}
	<-s.f.done
	defer s.f.unref(c)
	if s.f.err != nil {
		return s.f.err
	}
	copy(dst, s.f.buf[s.off-s.f.off:])
	c.ctr.servedFromFetch(s.kept, int64(len(dst)))
	pg.fill(s.off, dst, s.f.subs, s.f.off, s.f.end())
	s.f.readFrom(e, s.end)
	return nil
}

// readDisk serves present pages from the data file, reading and checking
// only the pages that hold the slot. It reports false (and no error) when
// a page turned out bad and was dropped.
func (e *entry) readDisk(s slot, dst []byte, pg *pgOut) (bool, error) {
	c := e.c
	lo := int64(s.p0) * s.page
	hi := min(lo+int64(len(s.crcs))*s.page, e.size())
	// Every read goes through the page cache, whether or not writes
	// bypass it: a reader picking baskets pays a copy, not a disk read,
	// and streams read ahead (stream.go). A read of whole pages goes
	// straight to dst.
	whole := s.off == lo && int64(len(dst)) == hi-lo
	buf := dst
	if !whole {
		pb := c.blockPool.Get().(*[]byte)
		defer c.blockPool.Put(pb)
		buf = (*pb)[:hi-lo]
	}
	data, err := e.diskReader(s, hi-lo)
	// startedDisk: a resident-only read found bytes missing, and may have
	// started reading them from disk.
	startedDisk := false
	// Pages checked once and still in the page cache are copied as asked,
	// unchecked (see checked.go), if they still count as checked once
	// copied. A pgread wants their CRCs: it reads on, and keeps them, so
	// the next pgread of these pages can borrow them instead
	// (File.ViewPages, pgsubs.go).
	if err == nil && s.checked && pg == nil {
		if e.residentNow(data, s.off, s.end) {
			ok, missing := c.disk.ReadResident(data, dst, s.off)
			if ok && e.stillChecked(s) {
				c.ctr.hitBytes.Add(int64(len(dst)))
				return true, nil
			}
			startedDisk = missing
		}
		s.checked = false // read and checked below
	}
	if err == nil && hi > lo {
		// What comes from disk may be the bad bytes the checks guard
		// against: while they are in the page cache, no reader may take
		// them for checked ones, so their checks are forgotten first.
		// Pages in the page cache are read as they are: forgetting their
		// checks would send every read planned meanwhile here too.
		if startedDisk || !e.residentNow(data, lo, hi) {
			e.uncheckSlot(s)
			s.checked = false
		}
		var n int
		n, err = data.ReadAt(buf, lo)
		if int64(n) >= hi-lo && errors.Is(err, io.EOF) {
			err = nil
		}
		buf = buf[:min(int64(n), hi-lo)]
	}
	bad, nbad, subs := blockmap.Verify(s.crcs, s.page, buf, err, pg != nil)
	if nbad == 0 && int64(len(buf)) == hi-lo {
		if !whole {
			copy(dst, buf[s.off-lo:])
		}
		if !s.checked || subs != nil {
			e.markChecked(s, subs)
		}
		c.ctr.hitBytes.Add(int64(len(dst)))
		pg.fill(s.off, dst, subs, lo, hi)
		return true, nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		e.diskFailed(err)
	}
	c.ctr.corruptBlocks.Add(1)
	c.log.Warn("cached pages failed their CRC32C check; refetching", "path", e.path, "offset", lo, "bad_pages", nbad, "err", err)
	e.mu.Lock()
	for i, b := range bad {
		p := s.p0 + i
		if b && e.gen == s.gen && e.m != nil && p < e.m.Pages() && e.m.Has(p) && e.m.CRC(p) == s.crcs[i] {
			e.m.Clear(p)
			e.dirty = true
		}
	}
	e.mu.Unlock()
	return false, nil
}

// diskReader returns the descriptor to read n bytes of slot s with: the
// streams' reader for a stream, whose read-ahead first forgets the checks
// of the pages it may reach (stream.go), else the buffered reader.
func (e *entry) diskReader(s slot, n int64) (*os.File, error) {
	c := e.c
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case n >= disk.StreamMin && c.disk.StreamReach() > 0:
		e.uncheckAheadLocked(s.p0 + len(s.crcs))
		return e.streamFile()
	case c.disk.Direct():
		return e.readFile()
	default:
		return e.dataFile()
	}
}

// markChecked records that the slot's pages passed their check, with
// their pgread CRCs if the check computed them (subs, else nil), unless
// they changed since it was planned.
func (e *entry) markChecked(s slot, subs []uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.m
	if e.gen != s.gen || m == nil || s.p0+len(s.crcs) > m.Pages() {
		return
	}
	for i, crc := range s.crcs {
		if p := s.p0 + i; !m.Has(p) || m.CRC(p) != crc {
			return
		}
	}
	m.MarkChecked(s.p0, s.p0+len(s.crcs))
	m.KeepSubs(e.c.subs, s.p0, subs)
}
