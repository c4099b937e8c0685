package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxReadvBytes bounds the data one ReadV asks for, so its answer stays
// within what a server sends for one request (XRootD's readv_iov_max
// times readv_ior_max is far more; 16 MiB keeps the client's buffer sane).
const maxReadvBytes = 16 << 20

// ReadV fills each bufs[i] from offset offs[i] with one kXR_readv: the
// segments cost one round trip, not one each. Every segment must lie
// within the file; a short answer is an error.
func (f *File) ReadV(ctx context.Context, bufs [][]byte, offs []int64) error {
	if len(bufs) != len(offs) || len(bufs) == 0 || len(bufs) > proto.ReadvMaxElems {
		return pathOp("readv", f.name, fmt.Errorf("%w: %d segments (want 1 to %d)", store.ErrInvalid, len(bufs), proto.ReadvMaxElems))
	}
	total := 0
	for i, b := range bufs {
		if len(b) > proto.ReadvMaxElemLen {
			return pathOp("readv", f.name, fmt.Errorf("%w: segment %d of %d bytes is over %d", store.ErrInvalid, i, len(b), proto.ReadvMaxElemLen))
		}
		total += len(b)
	}
	if total > maxReadvBytes {
		return pathOp("readv", f.name, fmt.Errorf("%w: %d bytes in one readv (at most %d)", store.ErrInvalid, total, maxReadvBytes))
	}
	if f.pages {
		return f.pgReadV(ctx, bufs, offs)
	}
	w := f.waiter()
	for {
		c, h := f.at()
		list := make([]byte, proto.ReadvElemLen*len(bufs))
		for i, b := range bufs {
			proto.PutReadListElem(list[i*proto.ReadvElemLen:], proto.ReadListElem{Handle: h, Len: int32(len(b)), Offset: offs[i]})
		}
		vec := &vecSink{bufs: bufs, offs: offs}
		began := time.Now()
		_, err := c.do(ctx, w, proto.ReqReadv, [16]byte{}, list, nil, vec)
		if err != nil && f.recover(ctx, w, c, err, began) == nil {
			continue // opened again: the same segments on the new handle
		}
		if err == nil {
			err = vec.result()
		}
		return pathOp("readv", f.name, err)
	}
}

// pgReadV is ReadV with page checks: kXR_readv carries no checksums, so
// each segment is a kXR_pgread of its own, all in flight at once on the
// connection (one round trip still, more frames).
func (f *File) pgReadV(ctx context.Context, bufs [][]byte, offs []int64) error {
	errs := make(chan error, len(bufs))
	for i := range bufs {
		go func() {
			n, err := f.pgReadAt(ctx, bufs[i], offs[i])
			if errors.Is(err, io.EOF) || err == nil && n < len(bufs[i]) {
				err = pathOp("readv", f.name, fmt.Errorf("%w: segment %d ends at %d, before the %d bytes asked", store.ErrIO, i, offs[i]+int64(n), len(bufs[i])))
			}
			errs <- err
		}()
	}
	var first error
	for range bufs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
