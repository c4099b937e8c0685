package cache

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// newKeepEnv is a cache whose stream blocks are written with O_DIRECT,
// the blocks kept.go keeps.
func newKeepEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	e := newEnv(t, func(c *Config) {
		c.BlockSize, c.ReadAhead = 1<<20, 4
		if mod != nil {
			mod(c)
		}
	})
	if !e.c.disk.Direct() {
		t.Skipf("%s does not support O_DIRECT: every block goes through the page cache and none is kept", e.dir)
	}
	return e
}

// spoil flips a byte in every block of the data file of name and drops
// it from the page cache: a read served from disk now fails its check
// and fetches the page again, one served from RAM does not.
func (e *env) spoil(name string, size int64) {
	e.t.Helper()
	df, err := os.OpenFile(filepath.Join(e.dir, "data", name), os.O_RDWR, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer df.Close()
	for off := int64(100); off < size; off += 1 << 20 {
		b := []byte{0}
		df.ReadAt(b, off)
		b[0] ^= 0xff
		df.WriteAt(b, off)
	}
	dropPageCache(e.t, df)
}

// A stream's blocks fetched ahead are served from RAM after their disk
// write, each let go once read to its end.
func TestStreamReadsKeptBlocks(t *testing.T) {
	e := newKeepEnv(t, nil)
	const size = 8 << 20
	want := e.file("k", size)
	f := e.open("/store/k")
	defer f.Close()
	read := func(off int64, n int) { t.Helper(); readWanting(t, f, want, off, n) }
	// Two blocks in a row earn read-ahead of blocks 2 to 5.
	read(0, 1<<20)
	read(1<<20, 1<<20)
	e.settle()
	if held := e.c.keep.held(); held != 4<<20 {
		t.Fatalf("%d bytes kept after read-ahead of 4 blocks, want %d", held, 4<<20)
	}
	e.spoil("store/k", size)
	up := e.up.bytes.Load()
	ram := e.c.ctr.ramHitBytes.Load()
	// Block 2 in pieces: kept until read to its end.
	read(2<<20, 512<<10)
	if held := e.c.keep.held(); held < 4<<20 {
		t.Fatalf("a block read halfway was let go (%d bytes kept)", held)
	}
	read(2<<20+512<<10, 512<<10)
	read(3<<20, 1<<20)
	e.settle()
	if got := e.c.ctr.ramHitBytes.Load() - ram; got != 2<<20 {
		t.Fatalf("%d bytes served from RAM, want the 2 MiB of blocks 2 and 3", got)
	}
	// The spoilt bytes on disk were never read: nothing was refetched
	// for blocks 2 and 3 (reading on earned more read-ahead: blocks 6, 7).
	if got := e.up.bytes.Load() - up; got != 2<<20 {
		t.Fatalf("%d bytes fetched upstream, want the 2 MiB of read-ahead", got)
	}
	if c := e.c.ctr.corruptBlocks.Load(); c != 0 {
		t.Fatalf("%d corrupt pages read from disk; the kept blocks should have been served", c)
	}
	read(4<<20, 4<<20)
	e.settle()
	if held := e.c.keep.held(); held != 0 {
		t.Fatalf("%d bytes still kept after every block was read", held)
	}
	if used := e.c.budget.inUse(); used != 0 {
		t.Fatalf("%d bytes of RAM in use with nothing in flight or kept", used)
	}
	f.e.mu.Lock()
	left := len(f.e.kept)
	f.e.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d blocks still in the file's table of kept fetches", left)
	}
}

// Blocks kept for a reader that stops reading are let go when the file
// is closed, and when the file is dropped while open.
func TestKeptBlocksLetGo(t *testing.T) {
	e := newKeepEnv(t, nil)
	const size = 8 << 20
	want := e.file("k", size)
	readHead := func() *File {
		f := e.open("/store/k")
		buf := make([]byte, 1<<20)
		for off := int64(0); off < 2<<20; off += 1 << 20 {
			if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, want[off:off+1<<20]) {
				t.Fatalf("read: %v", err)
			}
		}
		e.settle()
		return f
	}
	f := readHead()
	if e.c.keep.held() == 0 {
		t.Fatal("nothing kept after read-ahead")
	}
	f.Close()
	// The last fetch's writer lets the file go idle a moment after
	// settle sees it done.
	for deadline := time.Now().Add(5 * time.Second); e.c.keep.held() != 0 || e.c.budget.inUse() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after close: %d bytes kept, %d in use", e.c.keep.held(), e.c.budget.inUse())
		}
	}

	f = readHead()
	defer f.Close()
	f.e.mu.Lock()
	f.e.dropLocked()
	f.e.mu.Unlock()
	if held := e.c.keep.held(); held != 0 {
		t.Fatalf("after drop: %d bytes kept", held)
	}
}

// Kept blocks never take more than their share of the RAM budget: the
// oldest go first, and every read still gets the right bytes.
func TestKeptBlocksBounded(t *testing.T) {
	e := newKeepEnv(t, func(c *Config) { c.RAM = 8 << 20; c.ReadAhead = 6 })
	const size = 16 << 20
	files := [][]byte{e.file("a", size), e.file("b", size)}
	var fs []*File
	for _, name := range []string{"/store/a", "/store/b"} {
		f := e.open(name)
		defer f.Close()
		fs = append(fs, f)
	}
	buf := make([]byte, 512<<10)
	most := int64(0)
	for off := int64(0); off < size; off += int64(len(buf)) {
		for i, f := range fs {
			if _, err := f.ReadAt(buf, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, files[i][off:off+int64(len(buf))]) {
				t.Fatalf("file %d: wrong bytes at %d", i, off)
			}
			e.settle()
			held := e.c.keep.held()
			if held > e.c.keep.limit {
				t.Fatalf("%d bytes kept, over the limit of %d", held, e.c.keep.limit)
			}
			most = max(most, held)
		}
	}
	if most != e.c.keep.limit {
		t.Fatalf("at most %d bytes kept; read-ahead of 6 blocks of two files should fill the %d allowed", most, e.c.keep.limit)
	}
}

// Readers of the same file at once, with blocks kept, fetched and
// dropped under them (run with -race).
func TestKeptBlocksConcurrent(t *testing.T) {
	e := newKeepEnv(t, func(c *Config) { c.RAM = 16 << 20 })
	const size = 12 << 20
	want := e.file("k", size)
	parallel(4, func(i int) {
		f := e.open("/store/k")
		defer f.Close()
		buf := make([]byte, 256<<10)
		dropped := false
		for off := int64(i) * 64 << 10; off < size; off += int64(len(buf)) {
			n, err := f.ReadAt(buf, off)
			if err != nil && off+int64(n) < size {
				t.Errorf("reader %d at %d: %v", i, off, err)
				return
			}
			if !bytes.Equal(buf[:n], want[off:off+int64(n)]) {
				t.Errorf("reader %d: wrong bytes at %d", i, off)
				return
			}
			if i == 3 && off >= 4<<20 && !dropped {
				dropped = true
				f.e.mu.Lock()
				f.e.dropLocked()
				f.e.mu.Unlock()
			}
		}
	})
	e.settle()
	e.forgetIdle()
	if held, used := e.c.keep.held(), e.c.budget.inUse(); held != 0 || used != 0 {
		t.Fatalf("after the readers closed: %d bytes kept, %d in use", held, used)
	}
}

// A Lend is lent a kept block's buffer, or a fetch's in flight, with the
// CRCs the fetch computed where asked (from an aligned offset); the
// buffer goes back when the loan is released.
func TestLendFetchBuffers(t *testing.T) {
	e := newKeepEnv(t, nil)
	const size = 8<<20 + 5000
	want := e.file("k", size)
	f := e.open("/store/k")
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < 2<<20; off += 1 << 20 {
		if _, err := f.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
	}
	e.settle()
	// The loans go through a handle of their own: lends at offsets
	// near f's reads would continue f's stream, whose read-ahead would
	// fetch the blocks the loans below expect in flight.
	h := e.open("/store/k")
	defer h.Close()
	crcs := make([]uint32, pgPages(0, 2<<20))
	pages := store.LendOptions{CRCs: crcs}
	check := func(loan store.Loan, off int64) {
		t.Helper()
		b := loan.Bytes
		if !bytes.Equal(b, want[off:off+int64(len(b))]) {
			t.Fatalf("lent wrong bytes at %d", off)
		}
		if !slices.Equal(loan.CRCs, pgCRCsOf(want, off, off+int64(len(b)))) {
			t.Fatalf("wrong CRCs for the pages at %d", off)
		}
	}
	// Block 2 is kept: lent up to its end, and let go once given back.
	held := e.c.keep.held()
	loan, lent, err := lendAt(h, 2<<20+8192, 2<<20, pages)
	if err != nil || !lent || len(loan.Bytes) != 1<<20-8192 {
		t.Fatalf("lent %d bytes (%v, %v), want the rest of block 2", len(loan.Bytes), lent, err)
	}
	check(loan, 2<<20+8192)
	if got := e.c.ctr.ramHitBytes.Load(); got != 1<<20-8192 {
		t.Fatalf("%d bytes counted from RAM", got)
	}
	loan.Release()
	if e.c.keep.held() != held-1<<20 {
		t.Fatal("a block read to its end is still kept")
	}
	// Not a multiple of 4 KiB: lent, without CRCs (the caller computes
	// them from the bytes).
	loan, lent, err = lendAt(h, 3<<20+1, 4096, pages)
	if err != nil || !lent || !bytes.Equal(loan.Bytes, want[3<<20+1:3<<20+4097]) || loan.CRCs != nil {
		t.Fatalf("Lend at an unaligned offset: %d bytes (%v, %v), CRCs %v", len(loan.Bytes), lent, err, loan.CRCs)
	}
	loan.Release()
	// Bytes on disk only, mapped pages not allowed: read, with CRCs.
	loan, lent, err = lendAt(h, 0, 4096, pages)
	if err != nil || lent {
		t.Fatalf("Lend of bytes on disk only: lent %v, %v", lent, err)
	}
	check(loan, 0)
	// A plain read's loan (kXR_read) is lent at any offset.
	loan, lent, err = lendAt(h, 3<<20+4097, 5000, store.LendOptions{})
	if err != nil || !lent || !bytes.Equal(loan.Bytes, want[3<<20+4097:3<<20+9097]) {
		t.Fatalf("Lend at an unaligned offset: %d bytes (%v, %v), or wrong ones", len(loan.Bytes), lent, err)
	}
	loan.Release()
	if _, lent, _ := lendAt(h, 0, 4096, store.LendOptions{}); lent {
		t.Fatal("lent bytes on disk only")
	}
	// Fetches in flight: the borrower waits for them. One at the end of
	// the file lends up to the end, and says so.
	e.up.delay = 200 * time.Millisecond
	defer func() { e.up.delay = 0 }()
	var readers sync.WaitGroup
	for _, off := range []int64{7 << 20, 8 << 20} {
		g := e.open("/store/k")
		readers.Go(func() {
			defer g.Close()
			g.ReadAt(make([]byte, 4096), off)
		})
		for inflight := false; !inflight; time.Sleep(time.Millisecond) {
			f.e.mu.Lock()
			inflight = f.e.inflight[int(off/blockmap.CheckPage)] != nil
			f.e.mu.Unlock()
		}
		loan, lent, err := lendAt(h, off, 1<<20, pages)
		atEnd := off+blockmap.CheckPage > size
		if !lent || len(loan.Bytes) != min(blockmap.CheckPage, size-int(off)) || atEnd != (err == io.EOF) || err != nil && err != io.EOF {
			t.Fatalf("lent %d bytes at %d (%v, %v), want the fetch's page", len(loan.Bytes), off, lent, err)
		}
		check(loan, off)
		loan.Release()
	}
	readers.Wait()
	e.settle()
	if used := e.c.budget.inUse(); used != e.c.keep.held() {
		t.Fatalf("%d bytes of RAM in use, %d kept", used, e.c.keep.held())
	}
}
