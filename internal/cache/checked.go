package cache

import (
	"os"
)

// Integrity checks once per trip from disk. A page's CRC32C is checked
// when its bytes are read from the data file; the kernel's page cache then
// holds the bytes that passed, so a later small read of the page, while
// it is still in the page cache, copies just the bytes asked for and
// skips the check (XCache checks nothing at all). A page the cache wrote
// through the page cache counts as checked from the start: the kernel
// holds the bytes its CRC was computed from. What the CRCs guard
// against, bytes gone bad on the device or a map ahead of its data after
// a crash, happens beneath the page cache: a page the kernel dropped is
// read from disk again, and so checked again, because the question
// whether it is resident (residentNow), asked before the resident-only
// read below, says no, and the page's check is forgotten at once (the
// same when the read itself fails: it may have started bringing the page
// back).
//
// So that no reader takes bytes read back from disk for checked ones,
// every read that may come from disk forgets its pages' checks before it
// starts (readDisk; streams, for the pages the kernel's read-ahead may
// reach), and a read that found its pages checked when it was planned
// copies them only if no check of the file was forgotten since
// (blockMap.forgets, stillChecked): its plan and its copy can be far
// apart, with another part of the read waiting for upstream.
//
// The checked bits live in memory only (a restart checks every page
// again; an idle file's index record keeps its bits, so a job opening it
// again does not) and are cleared whenever a page is dropped or
// replaced.

// stillChecked reports whether no check of the file was forgotten since
// slot s was planned: pages it found checked were not read from disk
// meanwhile (a read from disk forgets their checks first), so bytes
// copied from the page cache since are the ones that passed.
func (e *entry) stillChecked(s slot) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen == s.gen && e.m != nil && e.m.Forgets() == s.forgets
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
// and the read is the window of a few microseconds View has too.
func (e *entry) residentNow(f *os.File, off, end int64) bool {
	if ok, asked := e.c.disk.ResidentFD(f, off, end); asked {
		return ok
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.data.Resident(e.sizeLocked(), off, end)
}

// uncheckSlot forgets the checks of the slot's pages, unless they changed
// since it was planned.
func (e *entry) uncheckSlot(s slot) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen != s.gen || e.m == nil || s.p0+len(s.crcs) > e.m.Pages() {
		return
	}
	e.m.UncheckRange(s.p0, s.p0+len(s.crcs))
}
