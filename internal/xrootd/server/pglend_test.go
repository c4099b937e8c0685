package server

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

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

// lendCounts counts a fakeLender's loans and those not yet given back.
type lendCounts struct {
	lends, mapped, out atomic.Int64
}

// outstanding is the number of loans not given back, once the server
// had the time to give them back: it does so after writing the answer,
// which the client may have read before that.
func (c *lendCounts) outstanding() int64 {
	for end := time.Now().Add(5 * time.Second); c.out.Load() != 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	return c.out.Load()
}

// fakeLender lends (store.Lender) bytes of data, a copy in memory of its
// file, as plan says: for a Lend of n bytes at off, the end of the loan,
// or -1 to read into the buffer instead. mapped says the loan stands for
// mapped pages, lent only where the caller allows them. CRCs are given
// where asked.
type fakeLender struct {
	store.File
	data   []byte
	c      *lendCounts
	calls  int
	mapped bool
	plan   func(calls int, off int64, n int) int64
}

func (f *fakeLender) Lend(off int64, buf []byte, opts store.LendOptions) (store.Loan, error) {
	f.calls++
	end := f.plan(f.calls, off, len(buf))
	if end < 0 || f.mapped && !opts.Mapped {
		return store.LenderOf(f.File).Lend(off, buf, opts)
	}
	size := int64(len(f.data))
	var crcs []uint32
	if opts.CRCs != nil {
		crcs = opts.CRCs[:0]
		for p := off; p < end; p += proto.PgPageSize {
			crcs = append(crcs, proto.CRC32C(f.data[p:min(p+proto.PgPageSize, end)]))
		}
	}
	var err error
	if end == size && end < off+int64(len(buf)) {
		err = io.EOF
	}
	f.c.lends.Add(1)
	if f.mapped {
		f.c.mapped.Add(1)
	}
	f.c.out.Add(1)
	return store.Lent(f.data[off:end:end], crcs, func() { f.c.out.Add(-1) }), err
}

// inPieces lends up to the next multiple of 100 KiB, as a cache lends a
// fetch's buffer up to its block's end, every call but each third.
func inPieces(size int64) func(calls int, off int64, n int) int64 {
	return func(calls int, off int64, n int) int64 {
		if calls%3 == 0 || off >= size {
			return -1
		}
		return min(off+int64(n), (off/(100<<10)+1)*(100<<10), size)
	}
}

// allOrNothing lends all that is asked, where the file has it, every
// other call, as a cache lends checked pages in the page cache.
func allOrNothing(size int64) func(calls int, off int64, n int) int64 {
	return func(calls int, off int64, n int) int64 {
		if calls%2 == 0 || off+int64(n) > size {
			return -1
		}
		return off + int64(n)
	}
}

// A pgread of a file that lends its pages sends them with the CRCs it
// gives, in the same frames as one it reads, and falls back to reading
// where the file does not lend (not now).
func TestPgreadLentPages(t *testing.T) {
	data := patterned(3<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	var c lendCounts
	size := int64(len(data))
	ws := wrapStore{Store: st, wrap: func(f store.File) store.File {
		return &fakeLender{File: f, data: data, c: &c, mapped: true, plan: allOrNothing(size)}
	}}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, ws))
	h := r.open("/f", proto.OpenRead)
	pgreadEach(t, r, h, data, []int64{0, 1, 4096, 5000, 1 << 20, size - 777, size})
	if c.mapped.Load() == 0 {
		t.Fatal("no pgread frame was lent")
	}
}

// A pgread of a file that lends pieces shorter than asked sends them in
// frames of their own, goes on after each, ends with the file, and gives
// every piece back.
func TestPgreadBorrowedPages(t *testing.T) {
	data := patterned(1<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	var c lendCounts
	size := int64(len(data))
	ws := wrapStore{Store: st, wrap: func(f store.File) store.File {
		return &fakeLender{File: f, data: data, c: &c, plan: inPieces(size)}
	}}
	r := login(t, startServer(t, Config{MaxReadChunk: 1 << 20}, ws))
	h := r.open("/f", proto.OpenRead)
	pgreadEach(t, r, h, data, []int64{0, 1, 4096, 100 << 10, size - 777, size})
	if c.lends.Load() == 0 {
		t.Fatal("no pgread frame was borrowed")
	}
	if n := c.outstanding(); n != 0 {
		t.Fatalf("%d borrowed pieces never given back", n)
	}
}

// A kXR_read of a file that lends its bytes (in pieces, or mapped) sends
// them in frames of their own where they stop short, goes on after each,
// ends with the file, falls back to reading where the file does not
// lend, and gives every loan back.
func TestReadLentBytes(t *testing.T) {
	data := patterned(1<<20 + 777)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	size := int64(len(data))
	for _, tc := range []struct {
		name   string
		mapped bool
		plan   func(calls int, off int64, n int) int64
	}{{"pieces", false, inPieces(size)}, {"mapped", true, allOrNothing(size)}} {
		t.Run(tc.name, func(t *testing.T) {
			var c lendCounts
			ws := wrapStore{Store: st, wrap: func(f store.File) store.File {
				return &fakeLender{File: f, data: data, c: &c, mapped: tc.mapped, plan: tc.plan}
			}}
			r := login(t, startServer(t, Config{MaxReadChunk: 256 << 10}, ws))
			h := r.open("/f", proto.OpenRead)
			for _, off := range []int64{0, 1, 4096, 100<<10 - 10, size - 777, size - 1, size} {
				for _, n := range []int32{1, 4096, 10000, 300 << 10, 2<<20 + 1} {
					st, got := r.call(proto.ReqRead, readBody(h, off, n), nil)
					lo, hi := min(off, size), min(off+int64(n), size)
					if st != proto.StatusOK || !bytes.Equal(got, data[lo:hi]) {
						t.Fatalf("read %d at %d: status %d, %d bytes, want %d", n, off, st, len(got), hi-lo)
					}
				}
			}
			if c.lends.Load() == 0 {
				t.Fatal("no frame was lent")
			}
			if n := c.outstanding(); n != 0 {
				t.Fatalf("%d loans never given back", n)
			}
		})
	}
}

// emptyLender lends nothing while saying it lent (as no lender should):
// every Lend answers a loan of no bytes and no error.
type emptyLender struct {
	store.File
	loans, givenBack atomic.Int64
}

func (f *emptyLender) Lend(off int64, buf []byte, opts store.LendOptions) (store.Loan, error) {
	f.loans.Add(1)
	return store.Lent([]byte{}, nil, func() { f.givenBack.Add(1) }), nil
}

// A loan of no bytes is given back and the bytes are read instead: a
// read, pgread or readv of such a file answers in full, rather than
// asking the lender for the same bytes forever or taking the empty loan
// for the end of the file.
func TestEmptyLoanIsRead(t *testing.T) {
	data := patterned(300<<10 + 5)
	st, dir := newOriginStore(t, true)
	writeTestFile(t, dir+"/f", data)
	// The server opens the file on its own goroutine: the test reads the
	// wrapped file through an atomic pointer.
	var opened atomic.Pointer[emptyLender]
	wrap := func(f store.File) store.File { el := &emptyLender{File: f}; opened.Store(el); return el }
	r := login(t, startServer(t, Config{MaxReadChunk: 128 << 10}, wrapStore{Store: st, wrap: wrap}))
	h := r.open("/f", proto.OpenRead)
	if st, got := r.call(proto.ReqRead, readBody(h, 4096, 200<<10), nil); st != proto.StatusOK || !bytes.Equal(got, data[4096:4096+200<<10]) {
		t.Fatalf("read: status %d, %d bytes, want %d", st, len(got), 200<<10)
	}
	pgreadEach(t, r, h, data, []int64{0, 8192})
	e := proto.ReadListElem{Handle: h, Len: 5000, Offset: 100}
	if st, body := r.call(proto.ReqReadv, [16]byte{}, readList(e)); st != proto.StatusOK || !bytes.Equal(body[16:], data[100:5100]) {
		t.Fatalf("readv: status %d, %d bytes, want %d", st, len(body)-16, 5000)
	}
	el := opened.Load()
	if el.loans.Load() == 0 {
		t.Fatal("nothing asked the file for a loan")
	}
	if el.givenBack.Load() != el.loans.Load() {
		t.Fatalf("%d empty loans, %d given back", el.loans.Load(), el.givenBack.Load())
	}
}
