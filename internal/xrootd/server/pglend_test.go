package server

import (
	"context"
	"sync/atomic"
	"testing"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// pageLendingStore's files lend their bytes with pgread CRCs (pageViewer)
// from a copy in memory, every other call, as a cache lends the checked
// pages still in the page cache and not the rest.
type pageLendingStore struct {
	store.Store
	data  []byte
	lends atomic.Int64
}

func (s *pageLendingStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &pageLendingFile{File: f, s: s}, nil
}

type pageLendingFile struct {
	store.File
	s     *pageLendingStore
	calls int
}

func (f *pageLendingFile) ViewPages(off int64, n int, crcs []uint32) ([]byte, bool) {
	f.calls++
	end := off + int64(n)
	if f.calls%2 == 0 || off%proto.PgPageSize != 0 || end > int64(len(f.s.data)) ||
		(end%proto.PgPageSize != 0 && end != int64(len(f.s.data))) {
		return nil, false
	}
	for i, p := 0, off; p < end; i, p = i+1, p+proto.PgPageSize {
		crcs[i] = proto.CRC32C(f.s.data[p:min(p+proto.PgPageSize, end)])
	}
	f.s.lends.Add(1)
	return f.s.data[off:end:end], true
}

// A pgread of a file that lends its pages sends them with the CRCs it
// gives, in the same frames as one it reads, and falls back to reading
// where the file does not lend (unaligned, or not now).
func TestPgreadLentPages(t *testing.T) {
	data := patterned(3<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	ls := &pageLendingStore{Store: st, data: data}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, ls))
	h := r.open("/f", proto.OpenRead)
	size := int64(len(data))
	pgreadEach(t, r, h, data, []int64{0, 1, 4096, 5000, 1 << 20, size - 777, size})
	if ls.lends.Load() == 0 {
		t.Fatal("no pgread frame was lent")
	}
}
