package cache

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/cache/disk"
	"sitebox/internal/store"
)

// lendAt asks f for a loan of n bytes at off as opts allow; lent reports
// that the bytes were lent rather than read into the caller's buffer.
func lendAt(f *File, off int64, n int, opts store.LendOptions) (loan store.Loan, lent bool, err error) {
	buf := make([]byte, n)
	loan, err = f.Lend(off, buf, opts)
	return loan, len(loan.Bytes) > 0 && &loan.Bytes[0] != &buf[0], err
}

// mappedAt is lendAt with mapped pages allowed and no CRCs asked, for a
// read the file holds all of: it fails the test on an error, on a loan of
// another length, or on bytes read other than want's. Lent bytes are
// looked at only when look: reading mapped pages maps them into the
// process, and the kernel then keeps them in the page cache until they
// are unmapped.
func mappedAt(t *testing.T, f *File, want []byte, off int64, n int, look bool) (lent bool) {
	t.Helper()
	loan, lent, err := lendAt(f, off, n, store.LendOptions{Mapped: true})
	defer loan.Release()
	end := min(off+int64(n), int64(len(want)))
	if err != nil && !(errors.Is(err, io.EOF) && end < off+int64(n)) || int64(len(loan.Bytes)) != end-off {
		t.Fatalf("Lend(%d, %d): %d bytes, %v; want %d", off, n, len(loan.Bytes), err, end-off)
	}
	if (!lent || look) && !bytes.Equal(loan.Bytes, want[off:end]) {
		t.Fatalf("Lend(%d, %d): wrong bytes (lent %v)", off, n, lent)
	}
	return lent
}

// Mapped bytes are lent only when their pages are cached, checked and in the
// page cache (asked with cachestat, or with mincore on kernels before
// 6.5); the mapping goes when the last handle that lent from it has
// closed and the file has left memory.
func TestLendMapsOnlyCheckedPagesInMemory(t *testing.T) {
	for _, mincore := range []bool{false, true} {
		name := map[bool]string{false: "cachestat", true: "mincore"}[mincore]
		t.Run(name, func(t *testing.T) { testLendMapped(t, mincore) })
	}
}

func testLendMapped(t *testing.T, mincore bool) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	e.c.disk.AskMincore(mincore)
	want := e.file("v", 512<<10)
	f := e.open("/store/v")
	const off, n = 64<<10 + 100, 40 << 10 // two pages
	// Reading lent bytes maps their pages into the process, and the
	// kernel then keeps them in the page cache until they are unmapped:
	// only the last check below looks at the bytes.
	lend := func(what string, ok, look bool) {
		t.Helper()
		if got := mappedAt(t, f, want, off, n, look); got != ok {
			t.Fatalf("%s: lent %v, want %v", what, got, ok)
		}
	}
	lend("not cached", false, false)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	e.settle()
	lend("written through the page cache", true, false)
	if mappedAt(t, f, want, off, 200<<10, false) {
		t.Fatal("lent pages that were never fetched")
	}
	mappedAt(t, f, want, 500<<10, 20<<10, false) // at the end of the file
	e.settle()

	// Pages the kernel dropped are read from disk and checked again
	// before they are lent.
	df, err := os.Open(filepath.Join(e.dir, "data/store/v"))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	dropPageCache(t, df)
	lend("dropped from the page cache", false, false)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	lend("read and checked again", true, true)

	if got := e.c.disk.Mapped(); got != 1 {
		t.Fatalf("%d data files mapped, want 1", got)
	}
	f.Close()
	if _, _, err := lendAt(f, off, n, store.LendOptions{Mapped: true}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Lend through a closed handle: %v", err)
	}
	// The entry keeps the mapping for the next job that opens the file,
	// until the file leaves memory.
	if got := e.c.disk.Mapped(); got != 1 {
		t.Fatalf("%d data files mapped after the last close, want 1", got)
	}
	e.forgetIdle()
	if got := e.c.disk.Mapped(); got != 0 {
		t.Fatalf("%d data files still mapped after the file left memory", got)
	}
}

// Past maxMappings data files, reads copy instead of lending.
func TestLendStopsMappingAtBound(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("w", 64<<10)
	f := e.open("/store/w")
	defer f.Close()
	buf := make([]byte, 1000)
	if _, err := f.ReadAt(buf, 0); err != nil {
		t.Fatal(err)
	}
	e.settle()
	e.c.disk.LimitMappings(0)
	if mappedAt(t, f, want, 0, 1000, true) {
		t.Fatal("mapped a data file past the bound")
	}
	e.c.disk.LimitMappings(disk.MaxMappings)
	if !mappedAt(t, f, want, 0, 1000, true) {
		t.Fatal("no lending below the bound")
	}
}

// An offset whose end would wrap past the largest int64 lends nothing,
// and the file stays usable.
func TestLendOffsetWraps(t *testing.T) {
	for _, mincore := range []bool{false, true} {
		e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
		e.c.disk.AskMincore(mincore)
		want := e.file("x", 64<<10)
		f := e.open("/store/x")
		buf := make([]byte, 1000)
		if _, err := f.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		e.settle()
		if loan, _, err := lendAt(f, math.MaxInt64-4095, 8192, store.LendOptions{Mapped: true}); err != io.EOF || len(loan.Bytes) != 0 {
			t.Fatalf("Lend past the end of the file: %d bytes, %v", len(loan.Bytes), err)
		}
		if !mappedAt(t, f, want, 0, 1000, true) {
			t.Fatalf("mincore %v: no lending after a wrapping offset", mincore)
		}
		f.Close()
	}
}
