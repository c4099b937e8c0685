package davclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"sitebox/internal/store"
)

var _ store.RangeReader = (*file)(nil)

// ReadRange streams the n bytes at off with one range request: the
// body is handed to the caller as it arrives (a copy writes each piece
// on), and must carry exactly that range.
func (r *file) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	if off < 0 || n <= 0 || off+n > r.info.Size {
		return nil, &store.PathError{Op: "read", Path: r.name, Err: fmt.Errorf("%w: range %d+%d of a %d-byte file", store.ErrInvalid, off, n, r.info.Size)}
	}
	cancel := context.CancelFunc(func() {})
	if r.fs.ioTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, r.fs.ioTimeout)
	}
	rng := fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	resp, err := r.fs.doAt(ctx, http.MethodGet, r.name, r.at, nil, map[string]string{"Range": rng}, 206, 200)
	if err != nil {
		cancel()
		return nil, err
	}
	bad := func(why string) (io.ReadCloser, error) {
		resp.Body.Close()
		cancel()
		return nil, &store.PathError{Op: "read", Path: r.name, Err: fmt.Errorf("%w: %s", store.ErrIO, why)}
	}
	if resp.StatusCode == http.StatusOK { // the range was ignored: skip to off
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			return bad("the whole file came, shorter than the range's start")
		}
	} else if cr := resp.Header.Get("Content-Range"); !strings.HasPrefix(cr, fmt.Sprintf("bytes %d-%d/", off, off+n-1)) {
		return bad(fmt.Sprintf("asked for %s, the answer is %q", rng, cr))
	}
	return &rangeBody{body: resp.Body, left: n, name: r.name, cancel: cancel}, nil
}

// rangeBody yields a range's bytes, and an error if the body ends first.
type rangeBody struct {
	body   io.ReadCloser
	left   int64
	name   string
	cancel context.CancelFunc
}

func (b *rangeBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	n, err := b.body.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	if err == io.EOF && b.left > 0 {
		err = &store.PathError{Op: "read", Path: b.name, Err: fmt.Errorf("%w: the answer ended %d bytes early", store.ErrIO, b.left)}
	}
	if err == io.EOF || b.left == 0 {
		return n, nil
	}
	return n, err
}

func (b *rangeBody) Close() error {
	err := b.body.Close()
	b.cancel()
	return err
}
