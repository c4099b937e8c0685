package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// writeFile is a file being written through the mount: close-to-open,
// as NFS does it. Its bytes live in a local temporary file; close(2)
// (FLUSH) and fsync upload the whole file when it changed, and the next
// open anywhere sees it. Opens of one inode share one writeFile, so they
// see each other's writes.
type writeFile struct {
	m    *fsys
	ino  uint64
	view *View

	mu    sync.Mutex
	tmp   *os.File
	n     atomic.Int64 // size: read without mu, which an upload holds for its duration
	dirty bool         // changed since the last upload
	// failed is why the last upload failed, nil after one that did not.
	failed error
	refs   int // handles open on it (under m.mu)
}

// writeHandle is one open of a writeFile.
type writeHandle struct{ w *writeFile }

func (h *writeHandle) release() {
	if err := h.w.m.releaseWriter(context.Background(), h.w); err != nil {
		h.w.m.log.Error("upload at the last close failed; the server does not have this file's last writes", "ino", h.w.ino, "err", err.Error())
	}
}

// share is one more open of w.
func (w *writeFile) share() *writeHandle {
	w.m.mu.Lock()
	w.refs++
	w.m.mu.Unlock()
	return &writeHandle{w: w}
}

// writer is the writeFile open on ino, or nil.
func (m *fsys) writer(ino uint64) *writeFile {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writers[ino]
}

// acquireWriter is the writeFile of ino with one more reference;
// created says it is new (its temporary empty).
func (m *fsys) acquireWriter(ino uint64, v *View) (w *writeFile, created bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.writers[ino]; w != nil {
		if w.view.Key != v.Key {
			// Its upload goes with the other credential's rights.
			return nil, false, fmt.Errorf("%w: open for writing through this mount with another credential (%s)", store.ErrBusy, w.view.Who)
		}
		w.refs++
		return w, false, nil
	}
	tmp, err := os.CreateTemp(m.cfg.TempDir, ".sitebox-mount-*")
	if err != nil {
		return nil, false, fmt.Errorf("%w: local temporary for a write: %v", store.ErrIO, err)
	}
	// The name is not needed: the file lives as long as it is open.
	os.Remove(tmp.Name())
	w = &writeFile{m: m, ino: ino, view: v, tmp: tmp, refs: 1}
	v.refs.Add(1)
	m.writers[ino] = w
	return w, true, nil
}

// releaseWriter drops one reference; the last uploads what changed
// and removes the temporary.
func (m *fsys) releaseWriter(ctx context.Context, w *writeFile) error {
	m.mu.Lock()
	w.refs--
	last := w.refs == 0
	if last {
		delete(m.writers, w.ino)
	}
	m.mu.Unlock()
	if !last {
		return nil
	}
	w.mu.Lock()
	err := w.failed
	w.mu.Unlock()
	if err == nil || !unreachable(err) {
		// The last close tries once more; not when the server could not
		// be reached for the whole --timeout just now (the close's own
		// upload): that would hold the release, and an unmount, as long
		// again.
		err = w.upload(ctx)
	}
	w.tmp.Close()
	w.view.refs.Add(-1)
	return err
}

func (w *writeFile) size() int64 { return w.n.Load() }

func (w *writeFile) readAt(p []byte, off int64) (int, error) {
	return w.tmp.ReadAt(p, off)
}

func (w *writeFile) writeAt(p []byte, off int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.tmp.WriteAt(p, off)
	w.n.Store(max(w.n.Load(), off+int64(n)))
	if n > 0 {
		w.dirty = true
	}
	return n, err
}

func (w *writeFile) truncate(size int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.tmp.Truncate(size); err != nil {
		return err
	}
	w.n.Store(size)
	w.dirty = true
	return nil
}

// fetch copies the file's current content from the server into the
// temporary: an open for writing without O_TRUNC changes the file, it
// does not start a new one.
func (w *writeFile) fetch(ctx context.Context, sp string) error {
	f, err := w.view.Data.Open(ctx, sp)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := store.Download(ctx, f, localTemp{w.tmp}, fi.Size, uploadChunk, uploadWindow, nil); err != nil {
		return err
	}
	// Whatever the file grew by since it was opened, read in order.
	buf := make([]byte, ioSize)
	off := fi.Size
	for {
		n, err := store.ReadAtContext(ctx, f, buf, off)
		if n > 0 {
			if _, werr := w.tmp.WriteAt(buf[:n], off); werr != nil {
				return fmt.Errorf("%w: local temporary: %v", store.ErrIO, werr)
			}
			off += int64(n)
		}
		if err == io.EOF || n == 0 && err == nil {
			break
		}
		if err != nil {
			return err
		}
	}
	w.n.Store(off)
	return nil
}

// upload sends the whole file to the server if it changed since the
// last upload. A failure leaves it marked changed, so the last close
// tries again, and is logged with its reason.
func (w *writeFile) upload(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.dirty {
		return nil
	}
	m := w.m
	rel, ok := m.nodes.path(w.ino)
	if !ok {
		w.dirty = false // unlinked while open: there is no name to write
		return nil
	}
	sp := m.storePath(rel)
	err := w.send(ctx, sp)
	w.failed = err
	m.changed(path.Dir(sp), sp)
	if err != nil {
		m.log.Error("upload failed", "path", sp, "size", w.n.Load(), "who", w.view.Who, "err", err.Error())
		return err
	}
	w.dirty = false
	if e, ok := w.view.Data.(evicter); ok {
		// The local cache's copy is of the file before this upload.
		e.Evict(ctx, sp)
	}
	m.log.Debug("uploaded", "path", sp, "size", w.n.Load())
	return nil
}

// evicter is a local cache (cache.Cache) that can drop its copy of a
// file.
type evicter interface {
	Evict(ctx context.Context, path string) error
}

// An upload keeps up to uploadWindow chunks of uploadChunk bytes in
// flight where the server takes writes in parallel (root://), so a file
// goes up at the link's speed rather than a chunk per round trip; its
// memory is bounded by their product, 16 MiB. Writes of 1 MiB: on
// loopback 64 MiB went up in 0.23–0.28 s so, against 0.31–0.41 s in
// 2 MiB writes (which leave the CPU's cache between the temporary's read
// and the socket's write) and 0.26–0.29 s one 1 MiB write at a time.
const (
	uploadChunk  = ioSize
	uploadWindow = 16
)

// localTemp is the local temporary an upload reads and a download
// writes: its failures are the local disk's, said so, not the server's.
type localTemp struct{ f *os.File }

func (t localTemp) ReadAt(p []byte, off int64) (int, error) {
	n, err := t.f.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: local temporary: %v", store.ErrIO, err)
	}
	return n, err
}

func (t localTemp) WriteAt(p []byte, off int64) (int, error) {
	n, err := t.f.WriteAt(p, off)
	if err != nil {
		err = fmt.Errorf("%w: local temporary: %v", store.ErrIO, err)
	}
	return n, err
}

func (w *writeFile) send(ctx context.Context, sp string) error {
	f, err := store.Create(ctx, w.view.Meta, sp, store.CreateOptions{Truncate: true})
	if err != nil {
		return err
	}
	size := w.n.Load() // writes wait for the upload (mu)
	if _, err := store.Upload(f, localTemp{w.tmp}, size, uploadChunk, uploadWindow, nil); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openWrite opens an existing file for writing (or reading and writing).
func (m *fsys) openWrite(ctx context.Context, v *View, ino uint64, rel string, flags uint32, out *fuse.OpenOut) fuse.Status {
	if st := m.mayWrite("open for writing", rel, v); !st.Ok() {
		return st
	}
	w, created, err := m.acquireWriter(ino, v)
	if err != nil {
		return m.errno("open", rel, v, err)
	}
	switch {
	case flags&syscall.O_TRUNC != 0:
		err = w.truncate(0) // reaches the server even with no write after
	case created:
		err = w.fetch(ctx, m.storePath(rel))
	}
	if err != nil {
		m.releaseWriter(ctx, w)
		return m.errno("open", rel, v, err)
	}
	out.Fh = m.addHandle(&writeHandle{w: w})
	return fuse.OK
}

// mayWrite refuses changes on a read-only mount, or to a server that
// takes no uploads, saying why in the log.
func (m *fsys) mayWrite(op, rel string, v *View) fuse.Status {
	if m.cfg.ReadOnly {
		return m.refuse(op, rel, syscall.EROFS, "the mount is read-only")
	}
	if _, ok := store.As[store.Creator](v.Meta); !ok {
		return m.refuse(op, rel, syscall.EROFS, "the server takes no uploads")
	}
	return fuse.OK
}

func (m *fsys) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	h, ok := m.handle(in.Fh).(*writeHandle)
	if !ok {
		return 0, fuse.EBADF
	}
	n, err := h.w.writeAt(data, int64(in.Offset))
	if errors.Is(err, syscall.ENOSPC) {
		return uint32(n), m.refuse("write", "", syscall.ENOSPC, "no space left for the local temporary in "+m.cfg.TempDir)
	}
	if err != nil {
		return uint32(n), m.errno("write", "", h.w.view, fmt.Errorf("%w: local temporary: %v", store.ErrIO, err))
	}
	return uint32(n), fuse.OK
}
