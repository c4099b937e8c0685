// Package disk is a cache's directory on local disk: the data files at
// their namespace paths, the block maps beside them, and whether the
// disk is healthy enough to write to; and, for each cached file in use,
// the descriptors it is read and written with and its mapping (Data),
// with the kernel's answers about which of its pages are in the page
// cache.
package disk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sitebox/internal/cache/blockmap"
)

// Dir is the cache directory: data/ holds sparse data files at their
// namespace paths, meta/ the block maps at the same paths, tmp/ block
// maps being written (renamed into meta/ when complete). All access goes
// through an os.Root, so no path, symlink or race can leave the
// directory. Safe for concurrent use.
type Dir struct {
	dir    string
	root   *os.Root
	log    *slog.Logger
	direct bool // data files use O_DIRECT
	// noResident is set once preadv2(RWF_NOWAIT) turned out unsupported:
	// ReadResident then always declines (resident.go).
	noResident atomic.Bool
	// noCachestat is set once cachestat(2) turned out unsupported (a
	// kernel before 6.5): residency is asked with mincore instead.
	noCachestat atomic.Bool
	// streamReach is how far past a stream read the kernel may read ahead
	// (stream.go); 0: streams read without read-ahead.
	streamReach int64
	// mappings counts the data files mapped (mapping.go), up to
	// maxMappings.
	mappings    atomic.Int64
	maxMappings atomic.Int64

	mu        sync.Mutex
	lastErr   error     // non-nil while the disk is considered failed
	retryAt   time.Time // when to try writing again
	onFailure func()    // called on ENOSPC (see OnFull)
	// retry is how long the cache serves uncached after a disk error
	// before trying to write again (Config.DiskRetry).
	retry time.Duration
}

// The cache is the box's private copy: whatever the client that asked
// for a file was allowed, the files on disk are the box's alone (no job
// running on the box as a slot user may read them). The explicit modes
// hold whatever the process umask, which can only take bits away.
const (
	cacheDirMode  = 0o700
	cacheFileMode = 0o600
)

// Open opens (making it if need be) the cache directory dir. direct asks
// for O_DIRECT writes where the filesystem allows them; retry is how long
// the cache serves uncached after a disk error before it tries to write
// again.
func Open(dir string, direct bool, retry time.Duration, log *slog.Logger) (*Dir, error) {
	for _, sub := range []string{"data", "meta", "tmp"} {
		p := path.Join(dir, sub)
		if err := os.MkdirAll(p, cacheDirMode); err != nil {
			return nil, fmt.Errorf("cache directory: %w", err)
		}
		// A tree made by an earlier version was open to everyone.
		if err := os.Chmod(p, cacheDirMode); err != nil {
			log.Warn("cannot make the cache directory the box's alone", "dir", p, "err", err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	// Block maps half-written when the process died are garbage.
	if err := root.RemoveAll("tmp"); err == nil {
		root.Mkdir("tmp", cacheDirMode)
	}
	d := &Dir{dir: dir, root: root, log: log, retry: retry, streamReach: streamReach(dir)}
	d.maxMappings.Store(MaxMappings)
	if direct {
		if d.direct = d.probeDirect(); !d.direct {
			log.Info("cache filesystem does not support O_DIRECT; caching through the page cache", "dir", dir)
		}
	}
	return d, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Direct reports whether data files are written with O_DIRECT.
func (d *Dir) Direct() bool { return d.direct }

// OnFull sets what to do when a write finds the disk full (start a
// purge).
func (d *Dir) OnFull(fn func()) {
	d.mu.Lock()
	d.onFailure = fn
	d.mu.Unlock()
}

func dataName(p string) string { return "data" + p }
func metaName(p string) string { return "meta" + p }

// openData opens (creating) the data file of namespace path p.
func (d *Dir) openData(p string) (*os.File, error) {
	name := dataName(p)
	flags := os.O_RDWR | os.O_CREATE
	if d.direct {
		flags |= syscall.O_DIRECT
	}
	f, err := d.root.OpenFile(name, flags, cacheFileMode)
	if errors.Is(err, fs.ErrNotExist) {
		if err = d.root.MkdirAll(path.Dir(name), cacheDirMode); err == nil {
			f, err = d.root.OpenFile(name, flags, cacheFileMode)
		}
	}
	if err == nil && !d.direct {
		adviseRandom(f) // it is the reader too (see openRead)
	}
	return f, err
}

// openRead opens the data file of p for buffered reads, through the
// page cache even when writes bypass it: small hits (a 32 KiB basket)
// then cost a page-cache copy, not a disk read each time. Small writes
// (a scattered reader's pages) go through it too, so they are in the
// page cache when read again. Linux keeps the two coherent: an O_DIRECT
// write invalidates the cached pages it covers, and fsync on either
// descriptor syncs the file.
func (d *Dir) openRead(p string) (*os.File, error) {
	f, err := d.root.OpenFile(dataName(p), os.O_RDWR, 0)
	if err == nil {
		adviseRandom(f)
	}
	return f, err
}

// SaveMap writes p's block map atomically: a crash leaves the old map or
// the new one, never a mix.
func (d *Dir) SaveMap(p string, m *blockmap.Map) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "tmp/" + hex.EncodeToString(rnd[:])
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, cacheFileMode)
	if err != nil {
		return err
	}
	_, err = f.Write(m.Marshal())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		name := metaName(p)
		if err = d.root.Rename(tmp, name); errors.Is(err, fs.ErrNotExist) {
			if err = d.root.MkdirAll(path.Dir(name), cacheDirMode); err == nil {
				err = d.root.Rename(tmp, name)
			}
		}
	}
	if err != nil {
		d.root.Remove(tmp)
	}
	return err
}

// LoadMap reads p's block map.
func (d *Dir) LoadMap(p string) (*blockmap.Map, error) {
	b, err := d.root.ReadFile(metaName(p))
	if err != nil {
		return nil, err
	}
	return blockmap.Unmarshal(b)
}

// RemoveMap removes p's block map only, leaving its data to the next
// save or to the startup scan (which drops data without a map).
func (d *Dir) RemoveMap(p string) {
	d.root.Remove(metaName(p))
}

// Remove deletes p's map, then its data: a crash in between leaves data
// without a map, which counts as nothing cached and is cleaned at start.
func (d *Dir) Remove(p string) error {
	err1 := d.root.Remove(metaName(p))
	err2 := d.root.Remove(dataName(p))
	if errors.Is(err1, fs.ErrNotExist) {
		err1 = nil
	}
	if errors.Is(err2, fs.ErrNotExist) {
		err2 = nil
	}
	d.pruneDirs(p)
	return errors.Join(err1, err2)
}

// pruneDirs removes directories left empty above p (failing harmlessly on
// the first that is not empty).
func (d *Dir) pruneDirs(p string) {
	for dir := path.Dir(p); dir != "/"; dir = path.Dir(dir) {
		e1 := d.root.Remove(metaName(dir))
		e2 := d.root.Remove(dataName(dir))
		if e1 != nil && e2 != nil {
			return
		}
	}
}

// Scan calls fn for every valid block map not known already; fn must make
// its path known (or remove it). Invalid maps and data files without a map
// or an entry are removed. It runs while the cache serves, so it stops
// when ctx ends.
func (d *Dir) Scan(ctx context.Context, known func(p string) bool, fn func(p string, m *blockmap.Map)) error {
	err := fs.WalkDir(d.root.FS(), "meta", func(name string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		p := name[len("meta"):]
		if known(p) {
			return nil // an entry in use loaded the map itself, or a record has it
		}
		m, lerr := d.LoadMap(p)
		if lerr != nil {
			d.log.Warn("dropping unreadable cache entry", "path", p, "err", lerr)
			d.Remove(p)
			return nil
		}
		fn(p, m)
		return nil
	})
	if err != nil {
		return err
	}
	return fs.WalkDir(d.root.FS(), "data", func(name string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		// Every valid map is known by now (fn registered it): a data
		// file of an unknown path has no map, so nothing cached.
		if p := name[len("data"):]; !known(p) {
			d.root.Remove(name)
		}
		return ctx.Err()
	})
}

// Healthy reports whether writes should be attempted: the disk has not
// failed, or the retry time after a failure has come.
func (d *Dir) Healthy() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr == nil || time.Now().After(d.retryAt)
}

// Failed records a disk error and reports whether it is disk-wide: the
// disk is full, read-only, failing, or the cache tree was removed. Those
// switch the cache to serving uncached for d.retry, logged once; other
// errors concern one file, which its entry reports.
func (d *Dir) Failed(err error) bool {
	if !diskWide(err) {
		return false
	}
	d.mu.Lock()
	first := d.lastErr == nil
	d.lastErr, d.retryAt = err, time.Now().Add(d.retry)
	cb := d.onFailure
	d.mu.Unlock()
	if first {
		d.log.Error("cache disk failed; serving uncached until it recovers", "err", err, "retry_in", d.retry)
	}
	if cb != nil && errors.Is(err, syscall.ENOSPC) {
		cb()
	}
	return true
}

// Succeeded clears a failure once a write works again.
func (d *Dir) Succeeded() {
	d.mu.Lock()
	was := d.lastErr
	d.lastErr = nil
	d.mu.Unlock()
	if was != nil {
		d.log.Info("cache disk recovered; caching again", "after", was)
	}
}

// ErrorText is the error the disk failed with while it is considered
// failed, else "".
func (d *Dir) ErrorText() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.lastErr == nil {
		return ""
	}
	return d.lastErr.Error()
}

func diskWide(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, fs.ErrNotExist) // the cache tree itself is gone
}

// Statfs returns the cache filesystem's size and free space, in bytes and
// inodes.
func (d *Dir) Statfs() (total, free, inodes, freeInodes int64, err error) {
	var st syscall.Statfs_t
	if err = syscall.Statfs(d.dir, &st); err != nil {
		return
	}
	bs := int64(st.Bsize)
	return int64(st.Blocks) * bs, int64(st.Bavail) * bs, int64(st.Files), int64(st.Ffree), nil
}
