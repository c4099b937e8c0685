package server

import (
	"bytes"
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

// wrapStore opens its files through Store and hands them to wrap.
type wrapStore struct {
	store.Store
	wrap func(store.File) store.File
}

func (s wrapStore) Open(ctx context.Context, name string) (store.File, error) {
	f, err := s.Store.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	return s.wrap(f), nil
}

// pageBorrowingFile lends bytes (pageBorrower) in pieces ending at the
// next multiple of 100 KiB, as a cache lends a fetch's buffer up to its
// block's end, and never a piece that ends the file short of what was
// asked.
type pageBorrowingFile struct {
	store.File
	s *borrowCounts
}

type borrowCounts struct {
	data          []byte
	lends, giving atomic.Int64
}

func (f *pageBorrowingFile) BorrowPages(off int64, n int, crcs []uint32) ([]byte, func(), bool) {
	const piece = 100 << 10
	size := int64(len(f.s.data))
	end := min(off+int64(n), (off/piece+1)*piece)
	if off%proto.PgPageSize != 0 || off >= size || end > size || end < off+int64(n) && end == size {
		return nil, nil, false
	}
	for i, p := 0, off; p < end; i, p = i+1, p+proto.PgPageSize {
		crcs[i] = proto.CRC32C(f.s.data[p:min(p+proto.PgPageSize, end)])
	}
	f.s.lends.Add(1)
	f.s.giving.Add(1)
	return f.s.data[off:end:end], func() { f.s.giving.Add(-1) }, true
}

// A pgread of a file that lends pieces shorter than asked sends them in
// frames of their own, goes on after each, ends with the file, and gives
// every piece back.
func TestPgreadBorrowedPages(t *testing.T) {
	data := patterned(1<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	bs := &borrowCounts{data: data}
	ws := wrapStore{Store: st, wrap: func(f store.File) store.File { return &pageBorrowingFile{File: f, s: bs} }}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, ws))
	h := r.open("/f", proto.OpenRead)
	size := int64(len(data))
	pgreadEach(t, r, h, data, []int64{0, 1, 4096, 100 << 10, size - 777, size})
	if bs.lends.Load() == 0 {
		t.Fatal("no pgread frame was borrowed")
	}
	if n := bs.giving.Load(); n != 0 {
		t.Fatalf("%d borrowed pieces never given back", n)
	}
}

// readLendingFile lends bytes to kXR_read as a cache does: Borrow in pieces
// ending at the next multiple of 100 KiB (a fetch's buffer up to its
// block's end), never one ending the file short of what was asked; View
// every other call where Borrow would not, all asked or nothing.
type readLendingFile struct {
	store.File
	s     *borrowCounts
	views atomic.Int64
	calls atomic.Int64
}

func (f *readLendingFile) Borrow(off int64, n int) ([]byte, func(), bool) {
	const piece = 100 << 10
	size := int64(len(f.s.data))
	end := min(off+int64(n), (off/piece+1)*piece)
	if f.calls.Add(1)%3 == 0 || off >= size || end > size || end < off+int64(n) && end == size {
		return nil, nil, false
	}
	f.s.lends.Add(1)
	f.s.giving.Add(1)
	return f.s.data[off:end:end], func() { f.s.giving.Add(-1) }, true
}

func (f *readLendingFile) View(off int64, n int) ([]byte, bool) {
	end := off + int64(n)
	if f.calls.Add(1)%2 == 0 || end > int64(len(f.s.data)) {
		return nil, false
	}
	f.views.Add(1)
	return f.s.data[off:end:end], true
}

// A kXR_read of a file that lends its bytes (borrowed or mapped) sends
// them in frames of their own where they stop short, goes on after each,
// ends with the file, falls back to reading where the file does not lend,
// and gives every borrowed piece back.
func TestReadLentBytes(t *testing.T) {
	data := patterned(1<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	bs := &borrowCounts{data: data}
	var lf *readLendingFile
	ws := wrapStore{Store: st, wrap: func(f store.File) store.File { lf = &readLendingFile{File: f, s: bs}; return lf }}
	r := login(t, startServer(t, Config{MaxReadChunk: 256 << 10}, ws))
	h := r.open("/f", proto.OpenRead)
	size := int64(len(data))
	for _, off := range []int64{0, 1, 4096, 100<<10 - 10, size - 777, size - 1, size} {
		for _, n := range []int32{1, 4096, 10000, 300 << 10, 2<<20 + 1} {
			st, got := r.call(proto.ReqRead, readBody(h, off, n), nil)
			lo, hi := min(off, size), min(off+int64(n), size)
			if st != proto.StatusOK || !bytes.Equal(got, data[lo:hi]) {
				t.Fatalf("read %d at %d: status %d, %d bytes, want %d", n, off, st, len(got), hi-lo)
			}
		}
	}
	if bs.lends.Load() == 0 || lf.views.Load() == 0 {
		t.Fatalf("%d frames borrowed, %d lent from mappings: want some of each", bs.lends.Load(), lf.views.Load())
	}
	if n := bs.giving.Load(); n != 0 {
		t.Fatalf("%d borrowed pieces never given back", n)
	}
}

// emptyBorrower borrows out nothing while saying it lent (as no lender
// should): every Borrow and BorrowPages answers ok with no bytes.
type emptyBorrower struct {
	store.File
	loans, givenBack atomic.Int64
}

func (f *emptyBorrower) loan() ([]byte, func(), bool) {
	f.loans.Add(1)
	return []byte{}, func() { f.givenBack.Add(1) }, true
}

func (f *emptyBorrower) Borrow(off int64, n int) ([]byte, func(), bool) { return f.loan() }
func (f *emptyBorrower) BorrowPages(off int64, n int, crcs []uint32) ([]byte, func(), bool) {
	return f.loan()
}

// emptyViewer lends no mapped bytes while saying it did.
type emptyViewer struct {
	store.File
	views atomic.Int64
}

func (f *emptyViewer) View(off int64, n int) ([]byte, bool) { f.views.Add(1); return []byte{}, true }
func (f *emptyViewer) ViewPages(off int64, n int, crcs []uint32) ([]byte, bool) {
	f.views.Add(1)
	return []byte{}, true
}

// A loan of no bytes is given back and the bytes are read instead: a
// read or pgread of such a file answers in full, rather than asking a
// borrower for the same bytes forever or taking an empty view for the
// end of the file.
func TestEmptyLoanIsRead(t *testing.T) {
	data := patterned(300<<10 + 5)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	var eb *emptyBorrower
	var ev *emptyViewer
	for _, tc := range []struct {
		name  string
		wrap  func(store.File) store.File
		loans func() int64
	}{
		{"borrower", func(f store.File) store.File { eb = &emptyBorrower{File: f}; return eb }, func() int64 { return eb.loans.Load() }},
		{"viewer", func(f store.File) store.File { ev = &emptyViewer{File: f}; return ev }, func() int64 { return ev.views.Load() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := login(t, startServer(t, Config{MaxReadChunk: 128 << 10}, wrapStore{Store: st, wrap: tc.wrap}))
			h := r.open("/f", proto.OpenRead)
			if st, got := r.call(proto.ReqRead, readBody(h, 4096, 200<<10), nil); st != proto.StatusOK || !bytes.Equal(got, data[4096:4096+200<<10]) {
				t.Fatalf("read: status %d, %d bytes, want %d", st, len(got), 200<<10)
			}
			pgreadEach(t, r, h, data, []int64{0, 8192})
			if tc.loans() == 0 {
				t.Fatal("nothing asked the file for a loan")
			}
		})
	}
	if eb != nil && eb.givenBack.Load() != eb.loans.Load() {
		t.Fatalf("%d empty loans, %d given back", eb.loans.Load(), eb.givenBack.Load())
	}
}
