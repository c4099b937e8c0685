package client

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	list := make([]byte, proto.ReadvElemLen*len(bufs))
	total := 0
	for i, b := range bufs {
		if len(b) > proto.ReadvMaxElemLen {
			return pathOp("readv", f.name, fmt.Errorf("%w: segment %d of %d bytes is over %d", store.ErrInvalid, i, len(b), proto.ReadvMaxElemLen))
		}
		total += len(b)
		proto.PutReadListElem(list[i*proto.ReadvElemLen:], proto.ReadListElem{Handle: f.h, Len: int32(len(b)), Offset: offs[i]})
	}
	if total > maxReadvBytes {
		return pathOp("readv", f.name, fmt.Errorf("%w: %d bytes in one readv (at most %d)", store.ErrInvalid, total, maxReadvBytes))
	}
	if f.pages {
		return f.pgReadV(ctx, bufs, offs)
	}
	ctx, cancel := context.WithTimeout(ctx, f.c.ioTimeout)
	defer cancel()
	vec := &vecSink{bufs: bufs, offs: offs}
	w := waiter{max: f.c.maxWait}
	if _, err := f.c.do(ctx, &w, proto.ReqReadv, [16]byte{}, list, nil, vec); err != nil {
		return pathOp("readv", f.name, err)
	}
	if err := vec.result(); err != nil {
		return pathOp("readv", f.name, err)
	}
	return nil
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
