package client

import (
	"context"
	"encoding/binary"
	"fmt"

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
	resp, err := f.callCtx(ctx, proto.ReqReadv, [16]byte{}, list)
	if err != nil {
		return pathOp("readv", f.name, err)
	}
	// The answer is, per segment in order, its read_list header and data.
	for i, b := range bufs {
		if len(resp) < proto.ReadvElemLen {
			return pathOp("readv", f.name, fmt.Errorf("%w: answer ends before segment %d", store.ErrIO, i))
		}
		n := int(int32(binary.BigEndian.Uint32(resp[4:8])))
		off := int64(binary.BigEndian.Uint64(resp[8:16]))
		resp = resp[proto.ReadvElemLen:]
		if n != len(b) || off != offs[i] || len(resp) < n {
			return pathOp("readv", f.name, fmt.Errorf("%w: segment %d: %d bytes at %d, asked %d at %d", store.ErrIO, i, n, off, len(b), offs[i]))
		}
		copy(b, resp[:n])
		resp = resp[n:]
	}
	return nil
}
