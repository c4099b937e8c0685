package server

import (
	"bytes"
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// lendingStore's files lend (store.Viewer) the bytes of every other KiB
// from memory and refuse the rest, so one readv answer mixes lent and
// copied segments.
type lendingStore struct {
	store.Store
	data  []byte
	lends atomic.Int64
}

func (s *lendingStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &lendingFile{File: f, s: s}, nil
}

type lendingFile struct {
	store.File
	s *lendingStore
}

func (f *lendingFile) View(off int64, n int) ([]byte, bool) {
	if (off>>10)%2 == 1 || off+int64(n) > int64(len(f.s.data)) {
		return nil, false
	}
	f.s.lends.Add(1)
	return f.s.data[off : off+int64(n)], true
}

func TestReadvSendsLentSegments(t *testing.T) {
	data := patterned(3 << 20)
	inner, dir := newOriginStore(t, false)
	writeTestFile(t, filepath.Join(dir, "a"), data)
	st := &lendingStore{Store: inner, data: data}
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
	if n := st.lends.Load(); n != 4 {
		t.Fatalf("%d segments lent, want 4", n)
	}
}
