package proto

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadRequest feeds arbitrary bytes to the request decoder: it must
// never panic or allocate beyond its limit, and what it accepts must
// encode back to the same bytes.
func FuzzReadRequest(f *testing.F) {
	var body [16]byte
	f.Add(EncodeRequest(StreamID{1, 2}, ReqOpen, body, []byte("/store/file?cks.type=adler32")))
	f.Add(EncodeRequest(StreamID{0, 1}, ReqRead, body, nil))
	f.Add([]byte{0, 1, 0x0b, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 1, 0x0b})
	const limit = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ReadRequest(bytes.NewReader(b), limit)
		if err != nil {
			if !errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(req.Data) > limit {
			t.Fatalf("payload of %d bytes beyond the limit", len(req.Data))
		}
		enc := EncodeRequest(req.Stream, req.ID, req.Body, req.Data)
		if !bytes.Equal(enc, b[:len(enc)]) {
			t.Fatalf("round trip differs:\n%x\n%x", enc, b[:len(enc)])
		}
		hdr, dlen := DecodeRequestHeader(b)
		if hdr.ID != req.ID || int(dlen) != len(req.Data) {
			t.Fatalf("DecodeRequestHeader disagrees: %+v %d", hdr, dlen)
		}
		_ = req.Name()
		if req.ID == ReqReadv {
			ParseReadList(req.Data)
		}
		if req.ID == ReqPgwrite {
			PgwriteDataLen(req.I64(4), len(req.Data))
		}
	})
}
