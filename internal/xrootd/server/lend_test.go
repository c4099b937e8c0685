package server

import (
	"bytes"
	"path/filepath"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// evenKiB lends all that is asked from an even KiB, and nothing from an
// odd one, so one readv answer mixes lent and copied segments.
func evenKiB(size int64) func(calls int, off int64, n int) int64 {
	return func(calls int, off int64, n int) int64 {
		if (off>>10)%2 == 1 || off+int64(n) > size {
			return -1
		}
		return off + int64(n)
	}
}

func TestReadvSendsLentSegments(t *testing.T) {
	data := patterned(3 << 20)
	inner, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "a"), data)
	var c lendCounts
	st := wrapStore{Store: inner, wrap: func(f store.File) store.File {
		return &fakeLender{File: f, data: data, c: &c, mapped: true, plan: evenKiB(int64(len(data)))}
	}}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, st))
	h := r.open("/a", proto.OpenRead)
	// Adjacent copied segments share one run of the buffer; the big ones
	// split the answer into frames (kXR_oksofar).
	elems := []proto.ReadListElem{
		{Handle: h, Len: 100, Offset: 0},
		{Handle: h, Len: 100, Offset: 1024},
		{Handle: h, Len: 100, Offset: 3 * 1024},
		{Handle: h, Len: 700 << 10, Offset: 2 << 20},
		{Handle: h, Len: 500 << 10, Offset: 1024 + 50},
		{Handle: h, Len: 0, Offset: 7},
		{Handle: h, Len: 1<<20 - 16, Offset: 8192},
		{Handle: h, Len: 1, Offset: 3<<20 - 1},
	}
	stat, body := r.call(proto.ReqReadv, [16]byte{}, readList(elems...))
	if stat != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("readv: %d %s", c, m)
	}
	for i, e := range elems {
		got, err := parseElem(body)
		if err != nil || got != e {
			t.Fatalf("segment %d header %+v, want %+v", i, got, e)
		}
		if !bytes.Equal(body[16:16+e.Len], data[e.Offset:e.Offset+int64(e.Len)]) {
			t.Fatalf("segment %d data differs", i)
		}
		body = body[16+e.Len:]
	}
	if len(body) != 0 {
		t.Fatalf("%d bytes left over", len(body))
	}
	// Those at 0, 2 MiB and 8192; the empty one asks for nothing.
	if n := c.lends.Load(); n != 3 {
		t.Fatalf("%d segments lent, want 3", n)
	}
	if n := c.outstanding(); n != 0 {
		t.Fatalf("%d loans never given back", n)
	}
}

// A readv segment a file lends in pieces (a cache's fetch buffers, each
// up to its block's end) goes out whole, lent pieces and read ones in
// order, and every piece is given back.
func TestReadvLentPieces(t *testing.T) {
	data := patterned(1 << 20)
	inner, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "a"), data)
	var c lendCounts
	st := wrapStore{Store: inner, wrap: func(f store.File) store.File {
		return &fakeLender{File: f, data: data, c: &c, plan: inPieces(int64(len(data)))}
	}}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, st))
	h := r.open("/a", proto.OpenRead)
	var elems []proto.ReadListElem
	for off := int64(90 << 10); off+(30<<10) <= int64(len(data)); off += 150 << 10 {
		elems = append(elems, proto.ReadListElem{Handle: h, Len: 30 << 10, Offset: off})
	}
	stat, body := r.call(proto.ReqReadv, [16]byte{}, readList(elems...))
	if stat != proto.StatusOK {
		c, m := errOf(body)
		t.Fatalf("readv: %d %s", c, m)
	}
	for i, e := range elems {
		if !bytes.Equal(body[16:16+e.Len], data[e.Offset:e.Offset+int64(e.Len)]) {
			t.Fatalf("segment %d data differs", i)
		}
		body = body[16+e.Len:]
	}
	if c.lends.Load() == 0 {
		t.Fatal("no piece was lent")
	}
	if n := c.outstanding(); n != 0 {
		t.Fatalf("%d loans never given back", n)
	}
}
