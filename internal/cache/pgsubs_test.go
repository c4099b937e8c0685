package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sitebox/internal/cache/blockmap"
)

// pgCRCsOf are the pgread CRCs of want[off:end], 4 KiB at a time from an
// aligned off.
func pgCRCsOf(want []byte, off, end int64) []uint32 {
	var out []uint32
	for p := off; p < end; p += pgPage {
		out = append(out, blockmap.Checksum(want[p:min(p+pgPage, end)]))
	}
	return out
}

// A pgread of checked pages in the page cache lends them with the CRCs
// kept from their check: only from an aligned offset, for whole 4 KiB
// pages or the file's end, and not once the pages left the page cache or
// the CRCs no longer combine to their page's.
func TestViewPagesLendsKeptCRCs(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	const size = 3<<20 + 5000
	want := e.file("p", size)
	f := e.open("/store/p")
	crcs := make([]uint32, 1<<20/pgPage+1)
	view := func(what string, off int64, n int, ok bool) []byte {
		t.Helper()
		b, got := f.ViewPages(off, n, crcs)
		if got != ok {
			t.Fatalf("%s: ViewPages(%d, %d) ok = %v, want %v", what, off, n, got, ok)
		}
		if ok {
			if w := pgCRCsOf(want, off, off+int64(n)); !slices.Equal(crcs[:len(w)], w) {
				t.Fatalf("%s: CRCs %x, want %x", what, crcs[:len(w)], w)
			}
		}
		return b
	}
	view("not cached", 0, 1<<20, false)
	pgread := func() {
		t.Helper()
		buf, sums := make([]byte, size), make([]uint32, pgPages(0, size))
		if n, err := f.ReadPagesAt(buf, 0, sums); err != nil || n != size || !bytes.Equal(buf, want) {
			t.Fatalf("pgread: %d bytes, %v", n, err)
		}
		e.settle()
	}
	pgread() // fetched; then read back, checked and kept
	pgread()
	view("checked", 0, 1<<20, true)
	view("a page", 1<<20+4096, 4096, true)
	view("the file's end", 3<<20, 5000, true)
	view("unaligned", 100, 4096, false)
	view("part of a page", 0, 5000, false)
	view("past the end", 3<<20, 8192, false)
	if _, ok := f.ViewPages(0, 8192, make([]uint32, 1)); ok {
		t.Fatal("lent with no room for the CRCs")
	}

	// A kept CRC that no longer combines to its page's is never sent
	// (blockmap's TestKeptCRCsAreBounded).
	view("the next page", 64<<10, 64<<10, true)

	df, err := os.Open(filepath.Join(e.dir, "data/store/p"))
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	dropPageCache(t, df)
	view("dropped from the page cache", 0, 1<<20, false)
	pgread()
	if b := view("read and checked again", 0, 1<<20, true); !bytes.Equal(b, want[:1<<20]) {
		t.Fatal("lent the wrong bytes")
	}
	f.Close()
	if _, ok := f.ViewPages(0, 4096, crcs); ok {
		t.Fatal("lent through a closed handle")
	}
	e.forgetIdle()
}
