package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/xrootd/proto"
)

// wseg is one writev segment with its data.
type wseg struct {
	h    [4]byte
	off  int64
	data []byte
	len  int32 // the length announced; -1: len(data)
}

// writevFrame builds a kXR_writev request and the data that follows it.
func writevFrame(sid uint16, opts byte, segs []wseg) []byte {
	var list, data []byte
	for _, s := range segs {
		n := s.len
		if n == -1 {
			n = int32(len(s.data))
		}
		list = append(list, s.h[:]...)
		list = binary.BigEndian.AppendUint32(list, uint32(n))
		list = binary.BigEndian.AppendUint64(list, uint64(s.off))
		data = append(data, s.data...)
	}
	var id proto.StreamID
	binary.BigEndian.PutUint16(id[:], sid)
	return append(proto.EncodeRequest(id, proto.ReqWritev, [16]byte{opts}, list), data...)
}

// writev sends one writev and returns its answer.
func (r *rawConn) writev(opts byte, segs []wseg) (uint16, []byte) {
	r.t.Helper()
	sid := r.next
	r.next++
	r.raw(writevFrame(sid, opts, segs))
	var s proto.StreamID
	binary.BigEndian.PutUint16(s[:], sid)
	return r.answer(s)
}

func seg(h [4]byte, off int64, data string) wseg {
	return wseg{h: h, off: off, data: []byte(data), len: -1}
}

func TestWritev(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	r := login(t, addr)
	a := r.open("/a", proto.OpenDelete|proto.OpenUpdate)
	b := r.open("/b", proto.OpenDelete|proto.OpenUpdate)
	st, body := r.writev(proto.WritevSync, []wseg{
		seg(a, 0, "hello "), seg(a, 6, "world"), // contiguous: one write
		seg(b, 4, "bbbb"), seg(a, 20, "far"), seg(b, 0, "BB"), seg(a, 0, "H"), // later segments win
		{h: b, off: 100}, // empty: nothing to write
	})
	if st != proto.StatusOK {
		t.Fatalf("writev: %d %v", st, body)
	}
	want := map[string]string{"a": "Hello world\x00\x00\x00\x00\x00\x00\x00\x00\x00far", "b": "BB\x00\x00bbbb"}
	for name, w := range want {
		if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != w {
			t.Errorf("%s: %q, want %q", name, got, w)
		}
	}

	// Many tiny segments, as many as the list may hold.
	var many []wseg
	var whole []byte
	for i := range proto.WritevMaxElems {
		c := string(rune('a' + i%26))
		many = append(many, seg(a, int64(i), c))
		whole = append(whole, c...)
	}
	if st, body := r.writev(0, many); st != proto.StatusOK {
		t.Fatalf("writev of %d segments: %d %s", len(many), st, body)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a")); !bytes.Equal(got[:len(whole)], whole) {
		t.Errorf("after %d one-byte segments the file starts %q", len(many), got[:40])
	}
}

// TestWritevRefused checks the refusals that keep the session: nothing
// is written, the data is read and dropped, and the next request is
// served.
func TestWritevRefused(t *testing.T) {
	addr, dir := testEnv(t, Config{MaxReadChunk: 64 << 10})
	writeTestFile(t, filepath.Join(dir, "ro"), []byte("read only"))
	r := login(t, addr)
	w := r.open("/w", proto.OpenDelete|proto.OpenUpdate)
	ro := r.open("/ro", proto.OpenRead)
	tests := []struct {
		name string
		segs []wseg
		code int32
	}{
		{"handle not open", []wseg{seg(w, 0, "x"), seg([4]byte{9, 9, 9, 9}, 0, "y")}, proto.ErrFileNotOpen},
		{"file open for reading", []wseg{seg(w, 0, "x"), seg(ro, 0, "y")}, proto.ErrFileNotOpen},
		{"negative offset", []wseg{seg(w, -1, "x")}, proto.ErrArgInvalid},
		{"offset past any file", []wseg{seg(w, 1<<63-2, "xyz")}, proto.ErrArgInvalid},
		{"segment larger than a transfer", []wseg{{h: w, data: make([]byte, 64<<10+1), len: -1}}, proto.ErrNoMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, body := r.writev(0, tt.segs)
			r.wantErr(tt.name, st, body, tt.code)
			if got, _ := os.ReadFile(filepath.Join(dir, "w")); len(got) != 0 {
				t.Fatalf("a refused writev wrote %q", got)
			}
			if st, _ := r.call(proto.ReqStat, [16]byte{}, []byte("/w")); st != proto.StatusOK {
				t.Fatalf("the session does not go on after the refusal: stat %d", st)
			}
		})
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "ro")); string(got) != "read only" {
		t.Errorf("file open for reading changed to %q", got)
	}
}

// TestWritevStreamLost checks the lists after which the data cannot be
// told from the next request: answered, then the connection is closed,
// and the server serves others.
func TestWritevStreamLost(t *testing.T) {
	addr, dir := testEnv(t, Config{MaxRequestData: 1 << 20})
	var tooMany []wseg
	for range proto.WritevMaxElems + 1 {
		tooMany = append(tooMany, wseg{len: 1})
	}
	tests := []struct {
		name string
		raw  func(h [4]byte) []byte
		code int32
	}{
		{"list not whole elements", func(h [4]byte) []byte {
			return proto.EncodeRequest(proto.StreamID{0, 9}, proto.ReqWritev, [16]byte{}, make([]byte, 20))
		}, proto.ErrArgInvalid},
		{"empty list", func(h [4]byte) []byte {
			return proto.EncodeRequest(proto.StreamID{0, 9}, proto.ReqWritev, [16]byte{}, nil)
		}, proto.ErrArgInvalid},
		{"too many segments", func(h [4]byte) []byte { return writevFrame(9, 0, tooMany) }, proto.ErrArgTooLong},
		{"negative length", func(h [4]byte) []byte { return writevFrame(9, 0, []wseg{{h: h, len: -5}}) }, proto.ErrArgInvalid},
		{"more data than a request may carry", func(h [4]byte) []byte {
			return writevFrame(9, 0, []wseg{{h: h, len: 1 << 19}, {h: h, len: 1 << 19}, {h: h, len: 1}})
		}, proto.ErrArgTooLong},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := login(t, addr)
			// A file of its own: the closed session's writer lock may
			// still be held as the next case starts.
			name := fmt.Sprintf("lost%d", i)
			h := r.open("/"+name, proto.OpenDelete|proto.OpenUpdate)
			r.raw(tt.raw(h))
			hdr, body := r.recv()
			if c, msg := errOf(body); hdr.Status != proto.StatusError || c != tt.code || msg == "" {
				t.Fatalf("answer %d %d %q, want error %d", hdr.Status, c, msg, tt.code)
			}
			if _, _, err := r.tryRecv(); err == nil {
				t.Fatal("connection still open")
			}
			stillServes(t, addr)
			if got, _ := os.ReadFile(filepath.Join(dir, name)); len(got) != 0 {
				t.Errorf("a refused writev wrote %q", got)
			}
		})
	}
}

// TestWritevShortData: a writev whose data stops short of its lengths
// writes nothing of the segment left incomplete, and the session ends
// when the client leaves.
func TestWritevShortData(t *testing.T) {
	addr, dir := testEnv(t, Config{})
	r := login(t, addr)
	h := r.open("/short", proto.OpenDelete|proto.OpenUpdate)
	frame := writevFrame(5, 0, []wseg{{h: h, data: []byte("0123456789"), len: 100}})
	r.raw(frame)
	r.c.Close()
	stillServes(t, addr)
	if got, _ := os.ReadFile(filepath.Join(dir, "short")); len(got) != 0 {
		t.Errorf("an incomplete segment was written: %q", got)
	}
}
