package cache

import (
	"container/list"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/upstream"
)

// entry is one cached file. The block map, data file and fetches in flight
// are guarded by mu; refs (open handles, prefetchers and pending disk
// writes) by the cache's mu, so an entry in use is never purged.
type entry struct {
	c    *Cache
	path string
	up   *upstream.File // its handles upstream

	openMu sync.Mutex // serialises revalidation of this file
	// saveMu serialises map saves, which run without mu: an fsync can take
	// seconds while the disk is busy, and readers and the disk writer must
	// not wait for it.
	saveMu sync.Mutex

	mu    sync.Mutex
	m     *blockmap.Map // nil until the upstream has been asked
	vo    string        // the client VO passed upstream (see wanted)
	gen   uint64        // bumped when the cached copy is dropped
	dirty bool          // m's content changed since it was saved
	// touched: only m's last access changed since it was saved. The
	// flusher saves it (Cache.touched): a reader's close must not wait
	// for two fsyncs to record when it read.
	touched  bool
	warned   bool     // a disk error on this file was logged
	data     *os.File // nil until needed
	rdata    *os.File // buffered reader of data's file (see openRead); nil until needed
	mm       *mapping // data's file mapped, for lending its pages (view.go); nil until needed
	sdata    *os.File // streams' reader of data's file (stream.go); nil until needed
	inflight map[int]*fetch
	kept     map[int]*fetch // by block: a fetch of its pages kept in RAM after its write (keep.go)
	// carried are the checked bits the index kept for the file, until its
	// block map is loaded and takes them.
	carried *carriedChecks
	// fetching counts the fetches reading upstream, without mu, for the
	// closer of idle upstream handles (which holds Cache.mu, taken
	// before mu).
	fetching atomic.Int32

	// Guarded by Cache.mu.
	refs      int
	opens     int
	idle      *list.Element // in Cache.idle while no one uses the upstream handles
	idleSince time.Time
}

func (e *entry) size() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		return 0
	}
	return e.m.Size()
}

// wanted is what the cached copy expects of the upstream file: its size
// (a handle on another version is refused) and the VO of the client
// that reaches the file, which fetches pass upstream (a director there
// picks the VO's federation by it).
func (e *entry) wanted() (size int64, vo string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m != nil {
		size = e.m.Size()
	}
	return size, e.vo
}

// dataFile returns the open data file, opening or creating it. Called with
// e.mu held.
func (e *entry) dataFile() (*os.File, error) {
	if e.data != nil {
		return e.data, nil
	}
	f, err := e.c.disk.openData(e.path)
	if err != nil {
		return nil, err
	}
	// A sparse file of the final size from the start: writing into holes
	// is several times cheaper than extending the file block by block
	// (measured on ext4: 4.4 GB/s against 0.3 GB/s).
	// Rounded up so the last block can be written and read with O_DIRECT.
	if fi, err := f.Stat(); err == nil && e.m != nil && fi.Size() != alignUp(e.m.Size()) {
		if err := f.Truncate(alignUp(e.m.Size())); err != nil {
			f.Close()
			return nil, err
		}
	}
	e.data = f
	e.c.withData.add(e)
	return f, nil
}

// readFile returns the buffered reader of the data file, opening it.
// Called with e.mu held.
func (e *entry) readFile() (*os.File, error) { return e.reader(&e.rdata, e.c.disk.openRead) }

// reader returns *slot, a second descriptor of the data file, opening it
// with open (the data file first, which creates it). Called with e.mu
// held.
func (e *entry) reader(slot **os.File, open func(p string) (*os.File, error)) (*os.File, error) {
	if *slot != nil {
		return *slot, nil
	}
	if _, err := e.dataFile(); err != nil {
		return nil, err
	}
	f, err := open(e.path)
	if err != nil {
		return nil, err
	}
	*slot = f
	return f, nil
}

// closeFilesLocked closes the data file, its readers and its mapping.
func (e *entry) closeFilesLocked() {
	e.unmapLocked()
	e.closeLocked(&e.data, &e.rdata, &e.sdata)
}

// closeLocked closes the descriptors files point to, the data file's
// among them: the flusher need not look at e any more.
func (e *entry) closeLocked(files ...**os.File) {
	for _, f := range files {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
	e.c.withData.remove(e)
}

// dropLocked forgets every cached block (the upstream file changed, or the
// data on disk is unusable) and removes the files. Fetches in flight see
// the new generation and discard their data. The map forgets its pages
// and their checks with the files: a reader still open must fetch them
// again, and a page once checked must not pass for checked in the new,
// empty data file (its zeros, once in the page cache, would be served
// unchecked). Called with e.mu held.
func (e *entry) dropLocked() int64 {
	var freed int64
	if m := e.m; m != nil {
		freed = m.CachedBytes()
		e.m = blockmap.New(m.BlockSize(), m.Size(), m.MTime())
		e.m.Validated, e.m.LastAccess = m.Validated, m.LastAccess
	}
	e.gen++
	e.inflight = nil
	e.unkeepLocked()
	e.closeFilesLocked()
	e.c.disk.remove(e.path)
	e.dirty, e.touched = false, false
	e.up.CloseAll(nil)
	return freed
}

// flush makes the block map on disk match memory: the data file is synced
// first, so every block the saved map calls present is on disk (not
// needed when only the last access changed). Neither sync holds mu.
func (e *entry) flush() error {
	e.saveMu.Lock()
	defer e.saveMu.Unlock()
	e.mu.Lock()
	if !e.dirty && !e.touched || e.m == nil {
		e.mu.Unlock()
		return nil
	}
	snap := e.m.Clone()
	data := e.data
	gen := e.gen
	content := e.dirty
	e.dirty, e.touched = false, false
	e.mu.Unlock()

	var err error
	if content && data != nil {
		err = data.Sync()
	}
	if err == nil {
		err = e.c.disk.saveMap(e.path, snap)
		e.mu.Lock()
		if e.gen != gen {
			// Dropped while we saved: our map may have landed after the
			// drop removed the old one, and describes a copy that is gone.
			e.c.disk.removeMap(e.path)
			e.dirty = e.m != nil
		}
		e.mu.Unlock()
	}
	if err != nil {
		// A lost access time only ages the file for purging; a content
		// change is tried again.
		e.mu.Lock()
		e.dirty = e.dirty || content
		e.mu.Unlock()
		e.diskFailed(err)
	}
	return err
}

// diskFailed reports a disk error on this file: disk-wide ones are logged
// by the disk, once; others once per entry, however many blocks fail.
func (e *entry) diskFailed(err error) {
	if e.c.disk.failed(err) {
		return
	}
	e.mu.Lock()
	first := !e.warned
	e.warned = true
	e.mu.Unlock()
	if first {
		e.c.log.Warn("cannot cache this file; serving it uncached", "path", e.path, "err", err)
	}
}

// touch records an access for least-recently-used purging. The map is
// saved with it when something else changes, or by the flusher after the
// last close (see Cache.release).
func (e *entry) touch(now time.Time) {
	e.mu.Lock()
	if e.m != nil && now.Sub(e.m.LastAccess) > time.Second {
		e.m.LastAccess = now
		e.touched = true
	}
	e.mu.Unlock()
}

// closeData closes the data file, its reader and its mapping.
func (e *entry) closeData() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closeFilesLocked()
}

// idleData closes what an entry nobody uses need not keep open: the data
// file. A file mapped for lending (view.go) stays mapped, with the reader
// cachestat asks, until the entry leaves memory (forgetLocked, one idle
// time later) or is dropped: analysis jobs open the same files again and
// again, and each new mapping costs a page fault per page lent.
func (e *entry) idleData() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unkeepLocked()
	if e.mm == nil {
		e.closeFilesLocked()
		return
	}
	e.closeLocked(&e.data, &e.sdata)
}
