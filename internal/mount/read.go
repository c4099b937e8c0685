package mount

import (
	"context"
	"errors"
	"io"
	"path"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// readFile is a file open for reading on the server (or the local cache).
type readFile struct {
	f    store.File
	view *View
}

func (r *readFile) release() {
	r.f.Close()
	r.view.refs.Add(-1)
}

func (m *fsys) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if m.zeroOpen.Load() {
		// Opens need no request: the kernel stops sending them (and
		// their closes), and reads come without a handle (readInode).
		return fuse.ENOSYS
	}
	rel, ok := m.nodes.path(in.NodeId)
	if !ok {
		return fuse.ENOENT
	}
	v, st := m.caller(&in.InHeader)
	if !st.Ok() {
		return st
	}
	ctx := reqCtx(cancel)
	if in.Flags&syscall.O_ACCMODE != syscall.O_RDONLY || in.Flags&syscall.O_TRUNC != 0 {
		return m.openWrite(ctx, v, in.NodeId, rel, in.Flags, out)
	}
	if w := m.writer(in.NodeId); w != nil && w.view.Key == v.Key {
		// Being written through the mount: its reader sees the writes
		// (a reader with other rights asks the server).
		out.Fh = m.addHandle(w.share())
		return fuse.OK
	}
	h, fi, err := m.openRead(ctx, v, rel)
	if err != nil {
		return m.errno("open", rel, v, err)
	}
	// The kernel may keep the pages it read before only while the file
	// is the same; a changed size or mtime drops them.
	if m.nodes.keep(in.NodeId, fi.Size, fi.ModTime) {
		out.OpenFlags |= fuse.FOPEN_KEEP_CACHE
	}
	// Closing a file read here has nothing to upload: the kernel need
	// not tell us (a compiler opens and closes thousands of headers).
	out.OpenFlags |= fuse.FOPEN_NOFLUSH
	out.Fh = m.addHandle(h)
	return fuse.OK
}

// openRead opens rel for reading as v, and says the size and mtime it
// has as opened (zero when the server does not say).
func (m *fsys) openRead(ctx context.Context, v *View, rel string) (handle, store.FileInfo, error) {
	if fi, l, ok := m.known(v, rel); ok && !fi.IsDir() {
		// A program opening a file of a directory opens its neighbours
		// next (a compiler, an import): the first open reads the small
		// files of the directory, its own among them. Listing alone (ls,
		// find) reads nothing.
		if l != nil && l.firstOpen() {
			m.small.readDir(v, path.Dir(m.storePath(rel)), l.files())
		}
		if data, ok := m.small.get(ctx, v, m.storePath(rel), fi); ok {
			return &memFile{data: data}, fi, nil
		}
	}
	f, err := v.Data.Open(ctx, m.storePath(rel))
	if err != nil {
		return nil, store.FileInfo{}, err
	}
	fi, err := openedStat(f)
	if err != nil {
		fi = store.FileInfo{}
	}
	v.refs.Add(1)
	return &readFile{f: f, view: v}, fi, nil
}

// openStater is a file that says what its server reported of it at open.
type openStater interface {
	OpenStat() (store.FileInfo, bool)
}

// openedStat describes f as its open did where the server said (a
// root:// open returns the file's stat, a WebDAV open its PROPFIND),
// else asks: a stat of the open file is a round trip to the server.
func openedStat(f store.File) (store.FileInfo, error) {
	if s, ok := store.As[openStater](f); ok {
		if fi, ok := s.OpenStat(); ok {
			return fi, nil
		}
	}
	return f.Stat()
}

func (m *fsys) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	buf = buf[:min(len(buf), int(in.Size))]
	ctx := reqCtx(cancel)
	if in.Fh == 0 && m.zeroOpen.Load() {
		return m.readInode(ctx, in, buf)
	}
	h := m.handle(in.Fh)
	if h == nil {
		return nil, fuse.EBADF
	}
	n, err := readHandle(ctx, h, buf, int64(in.Offset))
	if err != nil {
		return nil, m.errno("read", "", nil, err)
	}
	return fuse.ReadResultData(buf[:n]), fuse.OK
}

// readHandle reads what h holds at off; the end of the file is no error.
func readHandle(ctx context.Context, h handle, buf []byte, off int64) (int, error) {
	var n int
	var err error
	switch h := h.(type) {
	case *readFile:
		n, err = store.ReadAtContext(ctx, h.f, buf, off)
	case *memFile:
		n = h.readAt(buf, off)
	case *writeHandle:
		n, err = h.w.readAt(buf, off)
	default:
		return 0, syscall.EBADF
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// Release closes a file; a file written through the mount is uploaded
// now if its last close did not (a failure can only be logged here).
func (m *fsys) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	if h := m.dropHandle(in.Fh); h != nil {
		h.release()
	}
}

// Flush is close(2): a file written through the mount is uploaded, and
// a failed upload fails the close, so no program takes a short file on
// the server for a written one.
func (m *fsys) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if in.Fh == 0 && m.zeroOpen.Load() {
		// A file opened without a request: nothing to upload on a
		// read-only mount, and ENOSYS tells the kernel not to ask again.
		return fuse.ENOSYS
	}
	h, ok := m.handle(in.Fh).(*writeHandle)
	if !ok {
		return fuse.OK
	}
	if err := h.w.upload(reqCtx(cancel)); err != nil {
		return fuse.EIO
	}
	return fuse.OK
}

// Fsync uploads too: the data is safe when the server has it.
func (m *fsys) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	h, ok := m.handle(in.Fh).(*writeHandle)
	if !ok {
		return fuse.OK
	}
	if err := h.w.upload(reqCtx(cancel)); err != nil {
		return fuse.EIO
	}
	return fuse.OK
}
