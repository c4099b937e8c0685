package cache

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/cache/disk"
)

// Bytes are lent only when their pages are cached, checked and in the
// page cache (asked with cachestat, or with mincore on kernels before
// 6.5); the mapping goes when the last handle that lent from it has
// closed and the file has left memory.
func TestViewLendsOnlyCheckedPagesInMemory(t *testing.T) {
	for _, mincore := range []bool{false, true} {
		name := map[bool]string{false: "cachestat", true: "mincore"}[mincore]
		t.Run(name, func(t *testing.T) { testViewLends(t, mincore) })
	}
}

func testViewLends(t *testing.T, mincore bool) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	e.c.disk.AskMincore(mincore)
	want := e.file("v", 512<<10)
	f := e.open("/store/v")
	const off, n = 64<<10 + 100, 40 << 10 // two pages
	// Reading lent bytes maps their pages into the process, and the
	// kernel then keeps them in the page cache until they are unmapped:
	// only the last check below looks at the bytes.
	lend := func(what string, ok bool) []byte {
		t.Helper()
		b, got := f.View(off, n)
		if got != ok {
			t.Fatalf("%s: View ok = %v, want %v", what, got, ok)
		}
		return b
	}
	lend("not cached", false)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	e.settle()
	lend("written through the page cache", true)
	if _, ok := f.View(off, 200<<10); ok {
		t.Fatal("lent pages that were never fetched")
	}
	if _, ok := f.View(500<<10, 20<<10); ok {
		t.Fatal("lent past the end of the file")
	}

	// Pages the kernel dropped are read from disk and checked again
	// before they are lent.
	df, err := os.Open(filepath.Join(e.dir, "data/store/v"))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	dropPageCache(t, df)
	lend("dropped from the page cache", false)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	if b := lend("read and checked again", true); !bytes.Equal(b, want[off:off+n]) {
		t.Fatal("lent the wrong bytes")
	}

	if got := e.c.disk.Mapped(); got != 1 {
		t.Fatalf("%d data files mapped, want 1", got)
	}
	f.Close()
	if _, ok := f.View(off, n); ok {
		t.Fatal("lent through a closed handle")
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
func TestViewStopsAtMappingBound(t *testing.T) {
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
	if _, ok := f.View(0, 1000); ok {
		t.Fatal("mapped a data file past the bound")
	}
	e.c.disk.LimitMappings(disk.MaxMappings)
	if b, ok := f.View(0, 1000); !ok || !bytes.Equal(b, want[:1000]) {
		t.Fatal("no lending below the bound")
	}
}

// An offset whose end would wrap past the largest int64 lends nothing,
// and the file stays usable.
func TestViewOffsetWraps(t *testing.T) {
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
		if _, ok := f.View(math.MaxInt64-4095, 8192); ok {
			t.Fatal("lent bytes past the end of the file")
		}
		if b, ok := f.View(0, 1000); !ok || !bytes.Equal(b, want[:1000]) {
			t.Fatalf("mincore %v: no lending after a wrapping offset", mincore)
		}
		f.Close()
	}
}
