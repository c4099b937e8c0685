package server

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/xrootd/proto"
)

// TestNamespaceChangesInOrder pipelines mkdirs of a nested path, each
// needing the one before, then rms from the deepest up, each needing the
// one before, without waiting for answers (as fsspec-xrootd's recursive
// rm does): every one succeeds because they run in the order sent.
func TestNamespaceChangesInOrder(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	r := login(t, addr)
	var paths []string
	p := ""
	for i := range 30 {
		p += "/d" + strings.Repeat("x", i%3)
		paths = append(paths, p)
	}
	var sids []proto.StreamID
	for _, p := range paths {
		sids = append(sids, r.send(proto.ReqMkdir, [16]byte{}, []byte(p)))
	}
	for i := len(paths) - 1; i >= 0; i-- {
		id := uint16(proto.ReqRmdir)
		if i%2 == 0 {
			id = proto.ReqRm // rm of an empty directory removes it, as in xrootd
		}
		sids = append(sids, r.send(id, [16]byte{}, []byte(paths[i])))
	}
	answers := map[proto.StreamID]uint16{}
	bodies := map[proto.StreamID][]byte{}
	for range sids {
		h, b := r.recv()
		answers[h.Stream], bodies[h.Stream] = h.Status, b
	}
	for i, sid := range sids {
		if answers[sid] != proto.StatusOK {
			code, msg := errOf(bodies[sid])
			t.Errorf("request %d: status %d, error %d %q", i, answers[sid], code, msg)
		}
	}
}

// TestDataAnswersInOrder pipelines big reads (served on the data lane)
// and small vector reads (served by the reader itself when the lane is
// idle) without reading the answers: they come back in the order sent,
// each answer's frames together, with the right bytes.
func TestDataAnswersInOrder(t *testing.T) {
	st, dir := newOriginStore(t, true)
	data := patterned(8 << 20)
	writeTestFile(t, filepath.Join(dir, "f"), data)
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, st))
	h := r.open("/f", proto.OpenRead)
	type sent struct {
		sid  proto.StreamID
		want []byte
	}
	var order []sent
	for i := range 20 {
		off := int64(i) * 250_000
		if i%3 == 0 {
			sid := r.send(proto.ReqRead, readBody(h, off, 3<<20), nil)
			order = append(order, sent{sid, data[off : off+3<<20]})
			continue
		}
		sid := r.send(proto.ReqReadv, [16]byte{}, readList(proto.ReadListElem{Handle: h, Len: 4096, Offset: off}))
		order = append(order, sent{sid, data[off : off+4096]})
	}
	for _, s := range order {
		var got []byte
		for {
			hdr, body := r.recv()
			if hdr.Stream != s.sid {
				t.Fatalf("a frame for stream %x while the answer for %x was due", hdr.Stream, s.sid)
			}
			if hdr.Status != proto.StatusOK && hdr.Status != proto.StatusOKSoFar {
				t.Fatalf("stream %x: status %d %q", hdr.Stream, hdr.Status, body)
			}
			got = append(got, body...)
			if hdr.Status == proto.StatusOK {
				break
			}
		}
		if len(s.want) == 4096 {
			got = got[proto.ReadvElemLen:] // the segment's read_list header
		}
		if !bytes.Equal(got, s.want) {
			t.Fatalf("stream %x: %d bytes, not the %d asked for", s.sid, len(got), len(s.want))
		}
	}
}
