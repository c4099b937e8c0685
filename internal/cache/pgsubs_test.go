package cache

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// pgPage is the unit of a loan's CRCs.
const pgPage = store.CRCPage

// pgPages is how many pgread pages (the first from off to the next
// multiple of pgPage) the n bytes at off have.
func pgPages(off, n int64) int {
	if n <= 0 {
		return 0
	}
	return int((off+n-1)/pgPage - off/pgPage + 1)
}

// pgCRCsOf are the pgread CRCs of want[off:end], 4 KiB at a time from an
// aligned off.
func pgCRCsOf(want []byte, off, end int64) []uint32 {
	var out []uint32
	for p := off; p < end; p += pgPage {
		out = append(out, blockmap.Checksum(want[p:min(p+pgPage, end)]))
	}
	return out
}

// A pgread of checked pages in the page cache is lent them with the CRCs
// kept from their check: only from an aligned offset, for whole 4 KiB
// pages or the file's end, and not once the pages left the page cache or
// the CRCs no longer combine to their page's. Whatever is not lent is
// read, with its CRCs.
func TestLendPagesWithKeptCRCs(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	const size = 3<<20 + 5000
	want := e.file("p", size)
	f := e.open("/store/p")
	crcs := make([]uint32, 1<<20/pgPage+1)
	// Lent bytes are looked at only at the end (see mappedAt).
	view := func(what string, off int64, n int, ok bool) {
		t.Helper()
		loan, lent, err := lendAt(f, off, n, store.LendOptions{CRCs: crcs, Mapped: true})
		defer loan.Release()
		end := min(off+int64(n), size)
		if err != nil && !(errors.Is(err, io.EOF) && end < off+int64(n)) || int64(len(loan.Bytes)) != end-off || !lent && !bytes.Equal(loan.Bytes, want[off:end]) {
			t.Fatalf("%s: Lend(%d, %d): %d bytes, %v", what, off, n, len(loan.Bytes), err)
		}
		if lent != ok {
			t.Fatalf("%s: Lend(%d, %d) lent %v, want %v", what, off, n, lent, ok)
		}
		if off%pgPage != 0 {
			if loan.CRCs != nil {
				t.Fatalf("%s: CRCs from an unaligned offset", what)
			}
		} else if w := pgCRCsOf(want, off, end); !slices.Equal(loan.CRCs, w) {
			t.Fatalf("%s: CRCs %x, want %x", what, loan.CRCs, w)
		}
	}
	view("not cached", 0, 1<<20, false)
	pgread := func() {
		t.Helper()
		buf, sums := make([]byte, size), make([]uint32, pgPages(0, size))
		for off := int64(0); off < size; {
			loan, err := f.Lend(off, buf[off:], store.LendOptions{CRCs: sums})
			n := int64(len(loan.Bytes))
			if err != nil && err != io.EOF || n == 0 || !bytes.Equal(loan.Bytes, want[off:off+n]) || !slices.Equal(loan.CRCs, pgCRCsOf(want, off, off+n)) {
				t.Fatalf("pgread at %d: %d bytes, %v", off, n, err)
			}
			loan.Release()
			off += n
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
	view("past the end", 3<<20, 8192, true)
	if _, _, err := lendAt(f, 0, 8192, store.LendOptions{CRCs: make([]uint32, 1)}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Lend with no room for the CRCs: %v", err)
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
	view("read and checked again", 0, 1<<20, true)
	if loan, _, _ := lendAt(f, 0, 1<<20, store.LendOptions{Mapped: true}); !bytes.Equal(loan.Bytes, want[:1<<20]) {
		t.Fatal("lent the wrong bytes")
	}
	f.Close()
	if _, _, err := lendAt(f, 0, 4096, store.LendOptions{CRCs: crcs, Mapped: true}); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Lend through a closed handle: %v", err)
	}
	e.forgetIdle()
}
