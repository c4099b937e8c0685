package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxIO caps one read or write request; larger ones are split.
const maxIO = 8 << 20

// File is an open remote file. ReadAt and WriteAt may be called
// concurrently: each is its own request on the shared connection.
type File struct {
	name string
	// info is the kXR_retstat answer at open; infoOK says the server
	// sent one.
	info   store.FileInfo
	infoOK bool
	closed atomic.Bool // counted off the connection's open files
	pages  bool        // read with kXR_pgread (Options.PageChecks)

	// fs and open are how the file was opened, so a file open for
	// reading whose connection dropped is opened again (recover.go);
	// open is nil for a file open for writing, which is not.
	fs   *FS
	open *pathReq

	mu sync.Mutex // guards c and h, which a reopen replaces
	c  *Conn
	h  [4]byte
	// reopening is held while the file is opened again, so the reads
	// that failed together reopen it once.
	reopening sync.Mutex
}

var _ store.WritableFile = (*File)(nil)

// Open opens name for reading.
func (f *FS) Open(ctx context.Context, name string) (store.File, error) {
	return f.open(ctx, name, proto.OpenRead, 0)
}

// Create opens name for writing as opts asks.
func (f *FS) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	var o uint16
	switch {
	case opts.Truncate:
		o = proto.OpenDelete
	case opts.Exclusive:
		o = proto.OpenNew
	default:
		o = proto.OpenUpdate
	}
	if opts.MkParents {
		o |= proto.OpenMkpath
	}
	perm := opts.Perm.Perm()
	if perm == 0 {
		perm = 0o644
	}
	return f.open(ctx, name, o, uint16(perm))
}

func (f *FS) open(ctx context.Context, name string, opts, mode uint16) (*File, error) {
	var body [16]byte
	binary.BigEndian.PutUint16(body[0:2], mode)
	binary.BigEndian.PutUint16(body[2:4], opts|proto.OpenRetstat)
	r, err := newPathReq("open", proto.ReqOpen, body, name)
	if err != nil {
		return nil, err
	}
	// c is the server that opened the file, after any redirects: the
	// handle means nothing anywhere else, so every later call goes there.
	resp, c, err := f.do(ctx, r)
	if err != nil {
		return nil, pathOp("open", r.path, err)
	}
	file, err := f.opened(r, resp, c)
	if err != nil {
		return nil, err
	}
	if opts&(proto.OpenDelete|proto.OpenNew|proto.OpenUpdate|proto.OpenAppend|proto.OpenWriteOnly) == 0 {
		file.open = r // open for reading: opened again after a drop
	}
	return file, nil
}

// opened is the file an open request r answered with resp on c.
func (f *FS) opened(r *pathReq, resp []byte, c *Conn) (*File, error) {
	if len(resp) < 4 {
		return nil, pathOp("open", r.path, io.ErrUnexpectedEOF)
	}
	file := &File{c: c, name: r.path, fs: f, pages: f.opts.PageChecks}
	c.files.Add(1)
	copy(file.h[:], resp[:4])
	if len(resp) > 12 {
		if fi, err := parseStat(baseName(r.path), string(resp[12:])); err == nil {
			file.info, file.infoOK = fi, true
		}
	}
	return file, nil
}

// DefaultIOTimeout is Options.IOTimeout when unset.
const DefaultIOTimeout = 2 * time.Minute

func (f *File) call(id uint16, body [16]byte, data []byte, put func(*[16]byte, [4]byte)) ([]byte, error) {
	return f.callCtx(context.Background(), id, body, data, put)
}

// callCtx sends a request on the file's handle, which put sets in body.
func (f *File) callCtx(ctx context.Context, id uint16, body [16]byte, data []byte, put func(*[16]byte, [4]byte)) ([]byte, error) {
	c, h := f.at()
	put(&body, h)
	return c.Do(ctx, id, body, data)
}

// handleAt puts a handle where most requests take it, in the first
// four bytes.
func handleAt(b *[16]byte, h [4]byte) { copy(b[0:4], h[:]) }

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.info.Size }

// OpenStat is what the server said of the file as it opened it (size,
// mtime, flags), without asking again; ok is false when it said nothing.
// A cache validates its copy by it, saving the round trip of a stat.
func (f *File) OpenStat() (fi store.FileInfo, ok bool) { return f.info, f.infoOK }

// ReadAt reads len(p) bytes at off; fewer at the end of the file, with
// io.EOF, like os.File. Each request is bounded by Options.IOTimeout.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	return f.ReadAtContext(context.Background(), p, off)
}

// ReadAtContext is ReadAt bounded by ctx as well as Options.IOTimeout.
// A read whose connection dropped opens the file again and is sent again
// (recover), within the wait budget (Options.MaxWait).
func (f *File) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if f.pages {
		return f.pgReadAt(ctx, p, off)
	}
	n := 0
	w := f.waiter()
	for n < len(p) {
		want := min(len(p)-n, maxIO)
		var body [16]byte
		binary.BigEndian.PutUint64(body[4:12], uint64(off+int64(n)))
		binary.BigEndian.PutUint32(body[12:16], uint32(want))
		c, h := f.at()
		handleAt(&body, h)
		began := time.Now()
		resp, err := c.doInto(ctx, proto.ReqRead, body, p[n:n+want])
		if err != nil && f.recover(ctx, w, c, err, began) == nil {
			continue // opened again: the same read on the new handle
		}
		if err != nil {
			return n, pathOp("read", f.name, err)
		}
		n += len(resp) // the data landed in p
		if len(resp) < want {
			return n, io.EOF
		}
	}
	return n, nil
}

// WriteAt writes p at off.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		chunk := p[n:min(len(p), n+maxIO)]
		var body [16]byte
		binary.BigEndian.PutUint64(body[4:12], uint64(off+int64(n)))
		if _, err := f.call(proto.ReqWrite, body, chunk, handleAt); err != nil {
			return n, pathOp("write", f.name, err)
		}
		n += len(chunk)
	}
	return n, nil
}

// writesInFlight is how many writes of one file an upload may keep in
// flight (store.Upload): 32 MiB in 1 MiB writes, what xrdcp keeps in
// flight (4 × 8 MiB), which fills a 50 ms round trip at 600 MB/s. A
// server answering one request of a connection at a time (xrootd) still
// takes them in order; the rest wait in the socket.
const writesInFlight = 32

// WritesInFlight makes File a store.ParallelWriter: WriteAt may be called
// concurrently, each write its own request.
func (f *File) WritesInFlight() int { return writesInFlight }

var _ store.ParallelWriter = (*File)(nil)

// Stat asks the server about the open file.
func (f *File) Stat() (store.FileInfo, error) {
	resp, err := f.call(proto.ReqStat, [16]byte{}, nil, func(b *[16]byte, h [4]byte) { copy(b[12:16], h[:]) })
	if err != nil {
		return store.FileInfo{}, pathOp("stat", f.name, err)
	}
	return parseStat(baseName(f.name), string(resp))
}

func (f *File) handleOp(op string, id uint16, extra func(*[16]byte)) error {
	var body [16]byte
	if extra != nil {
		extra(&body)
	}
	_, err := f.call(id, body, nil, handleAt)
	return pathOp(op, f.name, err)
}

// Sync asks the server to flush the file to disk.
func (f *File) Sync() error { return f.handleOp("sync", proto.ReqSync, nil) }

// Truncate sets the file's size.
func (f *File) Truncate(size int64) error {
	return f.handleOp("truncate", proto.ReqTruncate, func(b *[16]byte) { binary.BigEndian.PutUint64(b[4:12], uint64(size)) })
}

// Close closes the remote handle.
func (f *File) Close() error {
	if f.closed.CompareAndSwap(false, true) {
		c, _ := f.at()
		defer c.fileClosed()
	}
	return f.handleOp("close", proto.ReqClose, nil)
}

func (f *FS) simple(ctx context.Context, op string, id uint16, body [16]byte, name string) error {
	r, err := newPathReq(op, id, body, name)
	if err != nil {
		return err
	}
	_, _, err = f.do(ctx, r)
	return pathOp(op, r.path, err)
}

// Mkdir creates a directory (and its parents if asked).
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	var body [16]byte
	if parents {
		body[0] = proto.MkdirPath
	}
	if perm.Perm() == 0 {
		perm = 0o755
	}
	binary.BigEndian.PutUint16(body[14:16], uint16(perm.Perm()))
	return f.simple(ctx, "mkdir", proto.ReqMkdir, body, name)
}

// Remove deletes a file.
func (f *FS) Remove(ctx context.Context, name string) error {
	return f.simple(ctx, "rm", proto.ReqRm, [16]byte{}, name)
}

// Rmdir deletes an empty directory.
func (f *FS) Rmdir(ctx context.Context, name string) error {
	return f.simple(ctx, "rmdir", proto.ReqRmdir, [16]byte{}, name)
}

// Rename moves from to to on the server. Both may carry CGI; a
// redirect's CGI is merged into the new path's, as XrdCl does.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	src, err := newPathReq("mv", proto.ReqMv, [16]byte{}, from)
	if err != nil {
		return err
	}
	r, err := newPathReq("mv", proto.ReqMv, [16]byte{}, to)
	if err != nil {
		return err
	}
	r.lead = string(src.payload(src.cgi)) + " "
	if len(r.lead)-1 > 0x7fff { // arg1len is a kXR_int16
		return pathOp("mv", src.path, fmt.Errorf("%w: source path and CGI of %d bytes do not fit a mv request", store.ErrInvalid, len(r.lead)-1))
	}
	binary.BigEndian.PutUint16(r.body[14:16], uint16(len(r.lead)-1))
	_, _, err = f.do(ctx, r)
	return pathOp("mv", src.path, err)
}

// Chmod changes permissions.
func (f *FS) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	var body [16]byte
	binary.BigEndian.PutUint16(body[14:16], uint16(perm.Perm()))
	return f.simple(ctx, "chmod", proto.ReqChmod, body, name)
}
