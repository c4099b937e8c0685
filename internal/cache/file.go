package cache

import (
	"path"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// File is a cached file open for reading.
type File struct {
	c      *Cache
	e      *entry
	once   sync.Once
	closed atomic.Bool
	// maxEnd is the furthest offset read so far; a read near it counts as
	// sequential and triggers read-ahead.
	maxEnd atomic.Int64
	// runStart is where the current sequential run began, runBytes what
	// its reads have covered.
	runStart, runBytes atomic.Int64
	// window is the handle's read-ahead in blocks once it has widened
	// (caughtUp); 0 is the configured ReadAhead.
	window atomic.Int32
	// mm is the mapping this handle lent bytes from, kept until Close
	// (lend.go). Guarded by e.mu.
	mm *disk.Mapping
}

var _ store.File = (*File)(nil)

// Stat describes the cached file.
func (f *File) Stat() (store.FileInfo, error) {
	f.e.mu.Lock()
	defer f.e.mu.Unlock()
	return store.FileInfo{Name: path.Base(f.e.path), Size: f.e.m.Size(), Mode: 0o444, ModTime: f.e.m.MTime()}, nil
}

// Close releases the file; its blocks stay cached.
func (f *File) Close() error {
	f.once.Do(func() {
		f.closed.Store(true)
		f.e.touch(time.Now())
		f.e.mu.Lock()
		mm := f.mm
		f.mm = nil
		f.e.mu.Unlock()
		if mm != nil {
			mm.Unref()
		}
		f.c.mu.Lock()
		f.e.opens--
		if f.e.opens == 0 {
			f.c.markIdleLocked(f.e, time.Now())
		}
		f.c.mu.Unlock()
		f.c.release(f.e)
	})
	return nil
}
