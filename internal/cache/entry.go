package cache

import (
	"container/list"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/disk"
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
	warned   bool       // a disk error on this file was logged
	data     *disk.Data // its data file and the descriptors it is read and written with
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

// sizeLocked is the cached file's size, or -1 before the upstream was
// asked. Called with e.mu held.
func (e *entry) sizeLocked() int64 {
	if e.m == nil {
		return -1
	}
	return e.m.Size()
}

// dataFile returns the open data file, opening or creating it. Called
// with e.mu held.
func (e *entry) dataFile() (*os.File, error) { return e.data.File(e.sizeLocked()) }

// readFile returns the buffered reader of the data file, opening it.
// Called with e.mu held.
func (e *entry) readFile() (*os.File, error) { return e.data.Reader(e.sizeLocked()) }

// streamFile returns the streams' reader of the data file, opening it.
// Called with e.mu held.
func (e *entry) streamFile() (*os.File, error) { return e.data.Stream(e.sizeLocked()) }

// closeFilesLocked closes the data file, its readers and its mapping:
// the flusher need not look at e any more. Called with e.mu held.
func (e *entry) closeFilesLocked() {
	e.data.Close()
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
	e.c.disk.Remove(e.path)
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
	data := e.data.Opened()
	gen := e.gen
	content := e.dirty
	e.dirty, e.touched = false, false
	e.mu.Unlock()

	var err error
	if content && data != nil {
		err = data.Sync()
	}
	if err == nil {
		err = e.c.disk.SaveMap(e.path, snap)
		e.mu.Lock()
		if e.gen != gen {
			// Dropped while we saved: our map may have landed after the
			// drop removed the old one, and describes a copy that is gone.
			e.c.disk.RemoveMap(e.path)
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
	if e.c.disk.Failed(err) {
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
// file (disk.Data.Idle). A file mapped for lending stays mapped until the
// entry leaves memory (forgetLocked, one idle time later) or is dropped.
func (e *entry) idleData() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unkeepLocked()
	e.data.Idle()
	e.c.withData.remove(e)
}
