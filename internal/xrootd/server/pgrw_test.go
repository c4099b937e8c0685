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

// pgreadFrames reads the kXR_status frames of a pgread and checks their
// layout: each starts at the offset it names, carries a CRC32C before
// every page (the first running to a 4 KiB boundary) and matches it.
func pgreadFrames(t *testing.T, r *rawConn, sid proto.StreamID, off int64) []byte {
	t.Helper()
	var data []byte
	for {
		h, body := r.recv()
		if h.Stream != sid {
			t.Fatalf("frame for stream %x", h.Stream)
		}
		if h.Status != proto.StatusStatus {
			c, m := errOf(body)
			t.Fatalf("pgread: status %d (%d %s)", h.Status, c, m)
		}
		if h.Dlen != proto.StatusBodyLen+8 {
			t.Fatalf("header dlen %d, want status body and offset only", h.Dlen)
		}
		st, rest, err := proto.ParseStatus(body[:h.Dlen])
		if err != nil {
			t.Fatal(err)
		}
		if st.Stream != sid || st.ReqID != proto.ReqPgread {
			t.Fatalf("status body %+v", st)
		}
		if got := int64(binary.BigEndian.Uint64(rest)); got != off {
			t.Fatalf("frame offset %d, want %d", got, off)
		}
		pages := body[h.Dlen:]
		if len(pages) != int(st.DataLen) {
			t.Fatalf("data %d bytes, status says %d", len(pages), st.DataLen)
		}
		for len(pages) > 0 {
			pl := min(proto.PgPageSize-int(off%proto.PgPageSize), len(pages)-4)
			crc := binary.BigEndian.Uint32(pages)
			page := pages[4 : 4+pl]
			if proto.CRC32C(page) != crc {
				t.Fatalf("bad CRC for page at %d", off)
			}
			data = append(data, page...)
			pages = pages[4+pl:]
			off += int64(pl)
		}
		if st.RespType == proto.RespFinal {
			return data
		}
	}
}

func TestPgread(t *testing.T) {
	data := patterned(3<<20 + 777)
	addr, dir := testEnv(t, Config{MaxReadChunk: 1 << 20})
	writeTestFile(t, filepath.Join(dir, "f"), data)
	r := login(t, addr)
	h := r.open("/f", proto.OpenRead)
	size := int64(len(data))
	pgreadEach(t, r, h, data, []int64{0, 1, 4095, 4096, 5000, 1<<20 - 3, size - 10, size, size + 5000})
	st, body := r.call(proto.ReqPgread, readBody(h, 0, 0), nil)
	r.wantErr("zero length", st, body, proto.ErrArgInvalid)
}

// pgreadEach pgreads file h (holding data) at each offset, several
// lengths at each, and checks the frames and the bytes.
func pgreadEach(t *testing.T, r *rawConn, h [4]byte, data []byte, offs []int64) {
	t.Helper()
	size := int64(len(data))
	for _, off := range offs {
		for _, n := range []int32{1, 4096, 10000, 2<<20 + 1, 8 << 20} {
			t.Run(fmt.Sprintf("%d@%d", n, off), func(t *testing.T) {
				sid := r.send(proto.ReqPgread, readBody(h, off, n), nil)
				got := pgreadFrames(t, r, sid, off)
				lo, hi := min(off, size), min(off+int64(n), size)
				if !bytes.Equal(got, data[lo:hi]) {
					t.Fatalf("got %d bytes, want %d", len(got), hi-lo)
				}
			})
		}
	}
}

// pgwriteBody lays data out as pgwrite sends it: a CRC32C before each page.
// Pages listed in corrupt get a wrong CRC.
func pgwriteBody(off int64, data []byte, corrupt map[int64]bool) []byte {
	var out []byte
	for len(data) > 0 {
		pl := min(proto.PgPageSize-int(off%proto.PgPageSize), len(data))
		crc := proto.CRC32C(data[:pl])
		if corrupt[off] {
			crc ^= 1
		}
		out = binary.BigEndian.AppendUint32(out, crc)
		out = append(out, data[:pl]...)
		data = data[pl:]
		off += int64(pl)
	}
	return out
}

func pgwriteReq(h [4]byte, off int64, flags byte) [16]byte {
	var b [16]byte
	copy(b[:4], h[:])
	binary.BigEndian.PutUint64(b[4:], uint64(off))
	b[13] = flags
	return b
}

// pgwriteAnswer checks a pgwrite answer and returns the bad page offsets.
func pgwriteAnswer(t *testing.T, st uint16, body []byte, off int64) []int64 {
	t.Helper()
	if st != proto.StatusStatus {
		c, m := errOf(body)
		t.Fatalf("pgwrite: status %d (%d %s)", st, c, m)
	}
	s, rest, err := proto.ParseStatus(body[:proto.StatusBodyLen+8])
	if err != nil || s.ReqID != proto.ReqPgwrite || s.RespType != proto.RespFinal {
		t.Fatalf("status %+v %v", s, err)
	}
	if got := int64(binary.BigEndian.Uint64(rest)); got != off {
		t.Fatalf("answer offset %d, want %d", got, off)
	}
	cse := body[proto.StatusBodyLen+8:]
	if len(cse) == 0 {
		return nil
	}
	if proto.CRC32C(cse[4:]) != binary.BigEndian.Uint32(cse) {
		t.Fatal("CSE CRC mismatch")
	}
	var bad []int64
	for p := cse[8:]; len(p) >= 8; p = p[8:] {
		bad = append(bad, int64(binary.BigEndian.Uint64(p)))
	}
	return bad
}

func TestPgwrite(t *testing.T) {
	addr, dir := testEnv(t, Config{MaxReadChunk: 64 << 10})
	r := login(t, addr)
	h := r.open("/w", proto.OpenNew)
	data := patterned(300<<10 + 11)
	off := int64(100) // unaligned: the first page is short
	st, body := r.call(proto.ReqPgwrite, pgwriteReq(h, off, 0), pgwriteBody(off, data, map[int64]bool{4096: true, 200 << 10: true}))
	bad := pgwriteAnswer(t, st, body, off)
	if fmt.Sprint(bad) != fmt.Sprint([]int64{4096, 200 << 10}) {
		t.Fatalf("bad pages %v", bad)
	}
	// Closing with pages still bad fails; resending them fixes the file.
	h2 := r.open("/w", proto.OpenUpdate)
	for _, p := range bad {
		rel := p - off
		page := data[rel : rel+proto.PgPageSize]
		st, body := r.call(proto.ReqPgwrite, pgwriteReq(h, p, proto.PgRetry), pgwriteBody(p, page, nil))
		if b := pgwriteAnswer(t, st, body, p); len(b) != 0 {
			t.Fatalf("retry still bad: %v", b)
		}
	}
	if st, body := r.call(proto.ReqClose, handleBody(h), nil); st != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("close: %d %s", c, m)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "w"))
	if !bytes.Equal(got[off:], data) || !bytes.Equal(got[:off], make([]byte, off)) {
		t.Fatal("file content differs")
	}
	st, body = r.call(proto.ReqPgwrite, pgwriteReq(h2, 0, 0), pgwriteBody(0, []byte("xyz"), map[int64]bool{0: true}))
	if bad := pgwriteAnswer(t, st, body, 0); len(bad) != 1 {
		t.Fatalf("bad %v", bad)
	}
	st, body = r.call(proto.ReqClose, handleBody(h2), nil)
	r.wantErr("close with bad pages", st, body, proto.ErrChkSumErr)
	if got, _ := os.ReadFile(filepath.Join(dir, "w")); !bytes.Equal(got[off:], data) {
		t.Fatal("a page with a bad CRC was written")
	}
}

func TestPgwriteLayoutErrors(t *testing.T) {
	addr, _ := testEnv(t, Config{})
	r := login(t, addr)
	h := r.open("/w", proto.OpenNew)
	for _, tt := range []struct {
		name string
		off  int64
		data []byte
	}{
		{"only a checksum", 0, []byte{1, 2, 3, 4}},
		{"last unit without data", 0, append(pgwriteBody(0, make([]byte, 4096), nil), 1, 2, 3)},
		{"negative offset", -4096, pgwriteBody(0, []byte("abc"), nil)},
	} {
		st, body := r.call(proto.ReqPgwrite, pgwriteReq(h, tt.off, 0), tt.data)
		r.wantErr(tt.name, st, body, proto.ErrArgInvalid)
	}
	// The stream is still in step.
	if st, _ := r.call(proto.ReqPing, [16]byte{}, nil); st != proto.StatusOK {
		t.Fatal("ping after bad pgwrite failed")
	}
}

func TestWriteSyncTruncate(t *testing.T) {
	addr, dir := testEnv(t, Config{MaxReadChunk: 64 << 10})
	r := login(t, addr)
	h := r.open("/sub/dir/w", proto.OpenNew|proto.OpenMkpath)
	data := patterned(1<<20 + 3)
	var wb [16]byte
	copy(wb[:4], h[:])
	binary.BigEndian.PutUint64(wb[4:], 10)
	if st, body := r.call(proto.ReqWrite, wb, data); st != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("write: %d %s", c, m)
	}
	if st, _ := r.call(proto.ReqSync, handleBody(h), nil); st != proto.StatusOK {
		t.Fatal("sync failed")
	}
	tb := handleBody(h)
	binary.BigEndian.PutUint64(tb[4:], 1000)
	if st, _ := r.call(proto.ReqTruncate, tb, nil); st != proto.StatusOK {
		t.Fatal("truncate by handle failed")
	}
	r.call(proto.ReqClose, handleBody(h), nil)
	if got, _ := os.ReadFile(filepath.Join(dir, "sub/dir/w")); len(got) != 1000 || !bytes.Equal(got[10:], data[:990]) {
		t.Fatalf("content after write+truncate: %d bytes", len(got))
	}
	var pb [16]byte
	binary.BigEndian.PutUint64(pb[4:], 5)
	if st, _ := r.call(proto.ReqTruncate, pb, []byte("/sub/dir/w")); st != proto.StatusOK {
		t.Fatal("truncate by path failed")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "sub/dir/w")); fi.Size() != 5 {
		t.Fatalf("size %d after truncate by path", fi.Size())
	}
	// Writing through a handle opened for reading is refused, and the
	// payload is consumed so the connection stays usable.
	hr := r.open("/sub/dir/w", proto.OpenRead)
	copy(wb[:4], hr[:])
	st, body := r.call(proto.ReqWrite, wb, data)
	r.wantErr("write to read handle", st, body, proto.ErrFileNotOpen) // as xrootd
	st, body = r.call(proto.ReqClose, handleBody(hr), nil)
	if st != proto.StatusOK {
		t.Fatalf("close: %d %q", st, body)
	}
	st, body = r.call(proto.ReqClose, handleBody(hr), nil)
	r.wantErr("double close", st, body, proto.ErrFileNotOpen)
}
