package client

import (
	"encoding/binary"
	"fmt"
	"io"

	"sitebox/internal/store"
)

// vecSink takes a kXR_readv answer apart as it arrives: each segment's
// read_list header is checked against the segment asked for and its data
// read straight from the socket into the caller's buffer, so a vector
// read costs no allocation and no copy of its data. Frames may split the
// answer anywhere, even inside a header.
type vecSink struct {
	bufs [][]byte
	offs []int64
	i    int      // segment being filled
	hdr  [16]byte // its read_list header, hn bytes of it so far
	hn   int
	dn   int   // data bytes of segment i so far
	err  error // the first mismatch; the rest of the answer is discarded
}

// consume reads n bytes of answer from r.
func (v *vecSink) consume(r io.Reader, n int) error {
	for n > 0 {
		if v.err != nil || v.i >= len(v.bufs) {
			if v.err == nil {
				v.err = fmt.Errorf("%w: readv answer longer than the %d segments asked", store.ErrIO, len(v.bufs))
			}
			_, err := io.CopyN(io.Discard, r, int64(n))
			return err
		}
		if v.hn < len(v.hdr) {
			k := min(len(v.hdr)-v.hn, n)
			if _, err := io.ReadFull(r, v.hdr[v.hn:v.hn+k]); err != nil {
				return err
			}
			v.hn += k
			n -= k
			if v.hn == len(v.hdr) {
				v.checkHeader()
			}
			continue
		}
		b := v.bufs[v.i]
		k := min(len(b)-v.dn, n)
		if _, err := io.ReadFull(r, b[v.dn:v.dn+k]); err != nil {
			return err
		}
		v.dn += k
		n -= k
		if v.dn == len(b) {
			v.i, v.hn, v.dn = v.i+1, 0, 0
		}
	}
	return nil
}

func (v *vecSink) checkHeader() {
	got := int(int32(binary.BigEndian.Uint32(v.hdr[4:8])))
	off := int64(binary.BigEndian.Uint64(v.hdr[8:16]))
	if got != len(v.bufs[v.i]) || off != v.offs[v.i] {
		v.err = fmt.Errorf("%w: readv segment %d: %d bytes at %d, asked %d at %d", store.ErrIO, v.i, got, off, len(v.bufs[v.i]), v.offs[v.i])
		return
	}
	if got == 0 {
		v.i, v.hn = v.i+1, 0
	}
}

// result is the error of a complete answer: a mismatch, or segments
// missing.
func (v *vecSink) result() error {
	if v.err != nil {
		return v.err
	}
	if v.i < len(v.bufs) {
		return fmt.Errorf("%w: readv answer ends before segment %d", store.ErrIO, v.i)
	}
	return nil
}
