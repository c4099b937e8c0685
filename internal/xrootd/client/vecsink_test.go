package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"sitebox/internal/store"
)

func readvAnswer(segs [][]byte, offs []int64) []byte {
	var b []byte
	for i, s := range segs {
		var h [16]byte
		binary.BigEndian.PutUint32(h[4:8], uint32(len(s)))
		binary.BigEndian.PutUint64(h[8:16], uint64(offs[i]))
		b = append(append(b, h[:]...), s...)
	}
	return b
}

// A readv answer split into frames anywhere, even inside a header, lands
// in the caller's buffers.
func TestVecSinkSplitsAnywhere(t *testing.T) {
	segs := [][]byte{[]byte("hello"), {}, []byte("vector reads")}
	offs := []int64{7, 100, 1 << 40}
	ans := readvAnswer(segs, offs)
	for cut := 1; cut < len(ans); cut++ {
		bufs := [][]byte{make([]byte, 5), {}, make([]byte, 12)}
		v := &vecSink{bufs: bufs, offs: offs}
		r := bytes.NewReader(ans)
		if err := v.consume(r, cut); err != nil {
			t.Fatal(err)
		}
		if err := v.consume(r, len(ans)-cut); err != nil {
			t.Fatal(err)
		}
		if err := v.result(); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		for i := range segs {
			if !bytes.Equal(bufs[i], segs[i]) {
				t.Fatalf("cut %d: segment %d = %q", cut, i, bufs[i])
			}
		}
	}
}

// A segment other than the one asked for, a short answer or a long one
// is an error, and the frames are still read to their end.
func TestVecSinkMismatch(t *testing.T) {
	asked := []int64{0, 64}
	for name, ans := range map[string][]byte{
		"offset": readvAnswer([][]byte{[]byte("ab"), []byte("cd")}, []int64{0, 65}),
		"length": readvAnswer([][]byte{[]byte("ab"), []byte("cde")}, asked),
		"short":  readvAnswer([][]byte{[]byte("ab")}, asked),
		"long":   readvAnswer([][]byte{[]byte("ab"), []byte("cd"), []byte("ef")}, []int64{0, 64, 128}),
	} {
		v := &vecSink{bufs: [][]byte{make([]byte, 2), make([]byte, 2)}, offs: asked}
		r := bytes.NewReader(ans)
		if err := v.consume(r, len(ans)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.Len() != 0 {
			t.Fatalf("%s: %d bytes of the answer left unread", name, r.Len())
		}
		if err := v.result(); !errors.Is(err, store.ErrIO) {
			t.Fatalf("%s: result %v, want an I/O error", name, err)
		}
	}
}
