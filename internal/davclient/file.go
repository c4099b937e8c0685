package davclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"sitebox/internal/store"
)

// file reads with range requests, sent to the URL that answered Open's
// PROPFIND: after a director's redirect, straight to the data server.
type file struct {
	fs   *FS
	name string
	at   string
	info store.FileInfo
}

// Open stats the file and returns a range-reading handle.
func (f *FS) Open(ctx context.Context, name string) (store.File, error) {
	fi, at, err := f.stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &store.PathError{Op: "open", Path: name, Err: store.ErrIsDir}
	}
	return &file{fs: f, name: name, at: at, info: fi}, nil
}

// OpenStat is what the PROPFIND of Open said of the file.
func (r *file) OpenStat() (store.FileInfo, bool) { return r.info, true }

func (r *file) ReadAt(p []byte, off int64) (int, error) {
	return r.ReadAtContext(context.Background(), p, off)
}

// ReadAtContext is ReadAt with a context bounding the request. A 206
// answer must carry the range asked for: bytes from elsewhere in the file,
// or from a file that changed size since it was opened, are an error.
func (r *file) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &store.PathError{Op: "read", Path: r.name, Err: fmt.Errorf("%w: negative offset %d", store.ErrInvalid, off)}
	}
	if off >= r.info.Size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil // no request: "bytes=off-(off-1)" is not a range
	}
	if r.fs.ioTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.fs.ioTimeout)
		defer cancel()
	}
	want := int(min(int64(len(p)), r.info.Size-off)) // not off+len(p): it may wrap
	asked := []span{{off: off, buf: p[:want]}}
	resp, err := r.fs.doAt(ctx, http.MethodGet, r.name, r.at, nil, map[string]string{"Range": rangeHeader(asked)}, 206, 200)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK { // server ignored the range: skip to off
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return 0, &store.PathError{Op: "read", Path: r.name, Err: store.ErrIO}
		}
		if n, err := io.ReadFull(resp.Body, p[:want]); err != nil {
			return n, &store.PathError{Op: "read", Path: r.name, Err: fmt.Errorf("%w: %v", store.ErrIO, err)}
		}
	} else {
		fill := newRangeFill(asked, r.info.Size)
		if err := fill.answer(resp); err != nil || !fill.complete() {
			if err == nil {
				err = fmt.Errorf("the answer lacks bytes %d-%d", off, off+int64(want)-1)
			}
			return 0, &store.PathError{Op: "read", Path: r.name, Err: fmt.Errorf("%w: %w", store.ErrIO, err)}
		}
	}
	if want < len(p) {
		return want, io.EOF
	}
	return want, nil
}

func (r *file) Stat() (store.FileInfo, error) { return r.info, nil }
func (r *file) Close() error                  { return nil }

// upload streams sequential writes into one PUT request. HTTP cannot
// write at arbitrary offsets, so WriteAt must be called in order.
type upload struct {
	name string
	pw   *io.PipeWriter
	off  int64
	done chan error
	once sync.Once
	err  error
}

// Create starts a PUT; the body is whatever is written before Close.
func (f *FS) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	if opts.Update {
		return nil, &store.PathError{Op: "create", Path: name, Err: fmt.Errorf("%w: HTTP cannot update files in place", store.ErrUnsupported)}
	}
	pr, pw := io.Pipe()
	u := &upload{name: name, pw: pw, done: make(chan error, 1)}
	hdr := map[string]string{"Expect": "100-continue"} // see New
	if opts.Exclusive {
		hdr["If-None-Match"] = "*"
	}
	if opts.Size > 0 {
		hdr["Content-Length"] = strconv.FormatInt(opts.Size, 10) // see newRequest
	}
	go func() {
		resp, err := f.do(ctx, http.MethodPut, name, pr, hdr, 200, 201, 204)
		if err == nil {
			resp.Body.Close()
		}
		pr.CloseWithError(err)
		u.done <- err
	}()
	return u, nil
}

func (u *upload) WriteAt(p []byte, off int64) (int, error) {
	if off != u.off {
		return 0, &store.PathError{Op: "write", Path: u.name, Err: fmt.Errorf("%w: out-of-order write over HTTP", store.ErrUnsupported)}
	}
	n, err := u.pw.Write(p)
	u.off += int64(n)
	return n, err
}

func (u *upload) ReadAt(p []byte, off int64) (int, error) {
	return 0, &store.PathError{Op: "read", Path: u.name, Err: store.ErrUnsupported}
}
func (u *upload) Stat() (store.FileInfo, error) { return store.FileInfo{Size: u.off}, nil }
func (u *upload) Truncate(int64) error {
	return &store.PathError{Op: "truncate", Path: u.name, Err: store.ErrUnsupported}
}
func (u *upload) Sync() error { return nil }

// Close ends the body and waits for the server's answer.
func (u *upload) Close() error {
	u.once.Do(func() {
		u.pw.Close()
		u.err = <-u.done
	})
	return u.err
}
