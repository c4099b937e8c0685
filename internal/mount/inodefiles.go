package mount

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// A compiler opens and closes every header of a build, a thousand times
// for a small tree: once its names, attributes and pages are in the
// kernel, a warm build asks the mount for nothing but those opens and
// closes (OPEN, RELEASE), two trips through the kernel and the mount
// each, on the compiler's path. On a read-only mount of one user the
// kernel is told opens need no request (the first OPEN answered
// ENOSYS: the kernel's zero-message opens), so it keeps the files'
// pages across opens and sends nothing on open or close; a READ then
// carries no handle, only the inode, and the mount opens the file on
// the first read and keeps it open for the reads that follow.
//
// Only where one user's credential serves every caller: per-caller
// mounts (allow_other) need each open asked of the mount with the
// caller's uid, and writable mounts need opens and closes to upload.
// A file the server refuses to open then fails at its first read
// (EACCES, the reason logged) instead of at open; no byte is served the
// mount's credential may not read.

// maxInodeFiles bounds the files kept open for handle-less reads; past
// it the least recently read one not being read is closed (opened again
// when read again).
const maxInodeFiles = 64

// inodeFiles are the files kept open for handle-less reads, by inode.
type inodeFiles struct {
	max int

	mu    sync.Mutex
	lru   *list.List // of *inodeFile, most recently read first
	byIno map[uint64]*list.Element
}

// inodeFile is one such file: opened once by its first reader while
// the others wait (ready), then read by all; closed when dropped and no
// read is under way.
type inodeFile struct {
	ino   uint64
	ready chan struct{} // closed once h or err is set
	h     handle        // *readFile or *memFile
	err   error
	// size and mtime are the file's as opened: a read finding other
	// ones in the mount's listing opens the file again.
	size  int64
	mtime time.Time

	users   int  // reads under way (inodeFiles.mu)
	dropped bool // out of the table: closed when users reach 0
}

func newInodeFiles(max int) *inodeFiles {
	return &inodeFiles{max: max, lru: list.New(), byIno: map[uint64]*list.Element{}}
}

// acquire returns ino's file, counting one more read of it; created
// says the caller must open it (then set h or err and close ready).
func (t *inodeFiles) acquire(ino uint64) (f *inodeFile, created bool) {
	t.mu.Lock()
	if el := t.byIno[ino]; el != nil {
		f = el.Value.(*inodeFile)
		f.users++
		t.lru.MoveToFront(el)
		t.mu.Unlock()
		return f, false
	}
	f = &inodeFile{ino: ino, ready: make(chan struct{}), users: 1}
	t.byIno[ino] = t.lru.PushFront(f)
	var idle []*inodeFile
	for el := t.lru.Back(); el != nil && t.lru.Len() > t.max; {
		prev := el.Prev()
		if old := el.Value.(*inodeFile); old.users == 0 && t.dropLocked(el) {
			idle = append(idle, old)
		}
		el = prev
	}
	t.mu.Unlock()
	for _, old := range idle {
		old.close()
	}
	return f, true
}

// wait waits for f's opening to end; false if ctx ended first.
func (f *inodeFile) wait(ctx context.Context) bool {
	select {
	case <-f.ready:
		return true
	case <-ctx.Done():
		return false
	}
}

// done ends a read of f; a dropped file is closed after its last read.
func (t *inodeFiles) done(f *inodeFile) {
	t.mu.Lock()
	f.users--
	closeNow := f.dropped && f.users == 0
	t.mu.Unlock()
	if closeNow {
		f.close()
	}
}

// drop takes f out of the table (if it is still there): a failed open
// is tried again by the next read, a stale file opened again.
func (t *inodeFiles) drop(f *inodeFile) {
	t.mu.Lock()
	el := t.byIno[f.ino]
	if el == nil || el.Value != f {
		t.mu.Unlock()
		return
	}
	closeNow := t.dropLocked(el)
	t.mu.Unlock()
	if closeNow {
		f.close()
	}
}

// forget drops ino's file: the kernel forgot the inode, so no read of
// it can come.
func (t *inodeFiles) forget(ino uint64) {
	t.mu.Lock()
	el := t.byIno[ino]
	closeNow := el != nil && t.dropLocked(el)
	t.mu.Unlock()
	if closeNow {
		el.Value.(*inodeFile).close()
	}
}

// dropLocked takes el out of the table and reports whether its file is
// to be closed now (no read under way; else the last one closes it).
func (t *inodeFiles) dropLocked(el *list.Element) bool {
	f := el.Value.(*inodeFile)
	t.lru.Remove(el)
	delete(t.byIno, f.ino)
	f.dropped = true
	return f.users == 0
}

// closeAll closes every file (the mount is going away).
func (t *inodeFiles) closeAll() {
	t.mu.Lock()
	var idle []*inodeFile
	for el := t.lru.Front(); el != nil; {
		next := el.Next()
		if t.dropLocked(el) {
			idle = append(idle, el.Value.(*inodeFile))
		}
		el = next
	}
	t.mu.Unlock()
	for _, f := range idle {
		f.close()
	}
}

// close releases what f opened. Only a file no read holds is closed,
// and its opener, a read, set h or err and closed ready before it let
// go of it.
func (f *inodeFile) close() {
	if f.h != nil {
		f.h.release()
	}
}

// readInode answers a READ without a handle (zero-message opens): from
// the inode's file, opened by the first read of it and opened again
// when the mount's listing gives the file another size or mtime.
func (m *fsys) readInode(ctx context.Context, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	for attempt := 0; ; attempt++ {
		f, created := m.inodes.acquire(in.NodeId)
		if created {
			m.openInode(ctx, f, &in.InHeader)
		}
		if !f.wait(ctx) {
			m.inodes.done(f)
			return nil, fuse.EINTR
		}
		if f.err != nil {
			m.inodes.done(f)
			m.inodes.drop(f) // the next read tries again
			if errors.Is(f.err, context.Canceled) && ctx.Err() == nil && attempt < 3 {
				continue // the read that opened it was interrupted, not this one
			}
			return nil, m.openStatus(f)
		}
		if attempt == 0 && !created && m.inodeChanged(f, &in.InHeader) {
			m.inodes.done(f)
			m.inodes.drop(f)
			continue
		}
		n, err := readHandle(ctx, f.h, buf, int64(in.Offset))
		m.inodes.done(f)
		if err != nil {
			return nil, m.errno("read", "", nil, err)
		}
		return fuse.ReadResultData(buf[:n]), fuse.OK
	}
}

// openInode opens f's inode for reading as the caller of h, and ends
// f's opening.
func (m *fsys) openInode(ctx context.Context, f *inodeFile, h *fuse.InHeader) {
	defer close(f.ready)
	rel, ok := m.nodes.path(f.ino)
	if !ok {
		f.err = &openError{st: fuse.ENOENT}
		return
	}
	v, st := m.caller(h)
	if !st.Ok() {
		f.err = &openError{st: st}
		return
	}
	// What the listing says as the file is opened is what later reads
	// compare with (inodeChanged).
	listed, _, isListed := m.known(v, rel)
	hd, fi, err := m.openRead(ctx, v, rel)
	if err != nil {
		f.err = &openError{st: m.errno("open", rel, v, err), err: err}
		return
	}
	if isListed {
		fi = listed
	}
	f.h, f.size, f.mtime = hd, fi.Size, fi.ModTime
}

// openError is why an inode could not be opened, as the status its
// reads get (logged once, when the open failed).
type openError struct {
	st  fuse.Status
	err error
}

func (e *openError) Unwrap() error { return e.err }

func (e *openError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return e.st.String()
}

func (m *fsys) openStatus(f *inodeFile) fuse.Status {
	if oe, ok := f.err.(*openError); ok {
		return oe.st
	}
	return fuse.EIO
}

// inodeChanged reports whether the mount's current listing gives f's
// file another size or mtime than it had when opened (a file replaced
// on the server: its pages were dropped by the kernel when it saw the
// new attributes, and its reads must not come from the old file).
func (m *fsys) inodeChanged(f *inodeFile, h *fuse.InHeader) bool {
	rel, ok := m.nodes.path(f.ino)
	if !ok {
		return false
	}
	v, st := m.caller(h)
	if !st.Ok() {
		return false
	}
	fi, _, ok := m.known(v, rel)
	return ok && !fi.IsDir() && (fi.Size != f.size || !fi.ModTime.Equal(f.mtime))
}
