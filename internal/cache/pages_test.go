package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// readAt reads n bytes at off of name through the cache, on a fresh
// handle (its first read: no access pattern yet).
func (e *env) readAt(name string, off int64, n int) []byte {
	e.t.Helper()
	f, err := e.c.Open(context.Background(), name)
	if err != nil {
		e.t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		e.t.Fatalf("read %s at %d: %v", name, off, err)
	}
	return buf
}

// Scattered small reads with 1 MiB blocks fetch the pages they touch,
// not the blocks; the pages are kept across a restart, and a later read
// of a partly cached block fetches only its missing pages.
func TestScatteredReadsFetchPages(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("s", 4<<20+1000)
	const page, half = blockmap.CheckPage, blockmap.CheckPage / 2
	reads := []struct {
		name      string
		off       int64
		n         int
		upstream  int64
		afterRead bool
	}{
		{"inside one page", 2*page + 100, half, page, false},
		{"second block", 1<<20 + 1<<19 + 10, half, page, false},
		{"across a page boundary", 3<<20 + page - 4<<10, half, 2 * page, false},
		{"the short last page", 4<<20 + 10, 990, 1000, false},
		{"same pages again", 2*page + 100, half, 0, true},
		{"next page of a partial block", 3*page + 100, half, page, false},
	}
	for _, tc := range reads {
		t.Run(tc.name, func(t *testing.T) {
			before := e.up.bytes.Load()
			if got := e.readAt("/store/s", tc.off, tc.n); !bytes.Equal(got, want[tc.off:tc.off+int64(tc.n)]) {
				t.Fatal("data differs")
			}
			e.settle()
			if d := e.up.bytes.Load() - before; d != tc.upstream {
				t.Fatalf("fetched %d bytes upstream, want %d", d, tc.upstream)
			}
		})
	}
	es := e.c.Entries()
	if len(es) != 1 || es[0].CachedBytes != 5*page+1000 || es[0].Present != 4 {
		t.Fatalf("entries %+v, want 5 pages and the 1000-byte tail in 4 blocks", es)
	}
	e.restart()
	before := e.up.bytes.Load()
	for _, r := range reads {
		if got := e.readAt("/store/s", r.off, r.n); !bytes.Equal(got, want[r.off:r.off+int64(r.n)]) {
			t.Fatalf("data at %d differs after restart", r.off)
		}
	}
	if d := e.up.bytes.Load() - before; d != 0 {
		t.Fatalf("reads of cached pages after restart fetched %d bytes", d)
	}
	if got := e.read("/store/s", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("whole file differs")
	}
}

// A stream of small reads fetches whole blocks once its run covers
// fillAfter bytes: a few page-sized requests, then one per block.
func TestSequentialSmallReadsFillBlocks(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("q", 4<<20)
	if got := e.read("/store/q", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
	e.settle()
	if got := e.up.bytes.Load(); got != int64(len(want)) {
		t.Fatalf("fetched %d bytes, want the file once (%d)", got, len(want))
	}
	pagesFirst := int64(fillAfter/blockmap.CheckPage - 1)
	if got, most := e.up.reads.Load(), pagesFirst+1+3; got > most {
		t.Fatalf("%d upstream reads, want at most %d (pages until the run is a stream, then a block each)", got, most)
	}
}

// A corrupt page of a 1 MiB block is refetched alone.
func TestCorruptPageIsRefetched(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20 })
	want := e.file("c", 2<<20)
	e.read("/store/c", 1<<20)
	e.settle()
	p := filepath.Join(e.dir, "data/store/c")
	df, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	df.ReadAt(b, 1<<20+5*64<<10+9)
	b[0] ^= 0x10
	df.WriteAt(b, 1<<20+5*64<<10+9)
	df.Close()
	e.restart() // no stale page cache copy of the good byte
	before := e.up.bytes.Load()
	off := int64(1<<20 + 5*64<<10)
	if got := e.readAt("/store/c", off, 1000); !bytes.Equal(got, want[off:off+1000]) {
		t.Fatal("served corrupt data")
	}
	e.settle()
	if d := e.up.bytes.Load() - before; d != blockmap.CheckPage {
		t.Fatalf("refetched %d bytes, want one page (%d)", d, blockmap.CheckPage)
	}
	if got := e.read("/store/c", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("data differs after repair")
	}
}

// A map that claims pages the data file lost (a crash between data and
// map) serves the upstream's bytes, not zeros.
func TestLostPagesAreRefetched(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("l", 2<<20)
	for _, off := range []int64{0, 700 << 10, 1<<20 + 300<<10} {
		e.readAt("/store/l", off, 16<<10)
	}
	e.settle()
	e.c.Close()
	os.Truncate(filepath.Join(e.dir, "data/store/l"), 512<<10) // lose the last two pages
	e.start()
	for _, off := range []int64{0, 700 << 10, 1<<20 + 300<<10} {
		if got := e.readAt("/store/l", off, 16<<10); !bytes.Equal(got, want[off:off+16<<10]) {
			t.Fatalf("data at %d differs", off)
		}
	}
	if e.c.Stats().CorruptBlocks != 2 {
		t.Fatalf("corrupt = %d, want the two lost pages' reads", e.c.Stats().CorruptBlocks)
	}
}

// Lend hands out the pgread CRCs of what it reads, from a fetch (cold)
// and from disk (warm), for reads from 4 KiB boundaries, ending on them
// or not; from other offsets it gives none.
func TestLendCRCs(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("p", 3<<20+5000)
	for _, pass := range []string{"cold", "warm"} {
		for _, r := range [][2]int64{{0, 8192}, {4096, 70000}, {1<<20 - 4096, 200000}, {3 << 20, 5000}, {3<<20 + 4096, 904}, {100, 70000}, {1<<20 - 3000, 200000}, {3<<20 + 4000, 1000}} {
			f, err := e.c.Open(context.Background(), "/store/p")
			if err != nil {
				t.Fatal(err)
			}
			crcs := make([]uint32, pgPages(r[0], r[1]))
			loan, _, err := lendAt(f.(*File), r[0], int(r[1]), store.LendOptions{CRCs: crcs})
			n := int64(len(loan.Bytes))
			if err != nil && err != io.EOF || !bytes.Equal(loan.Bytes, want[r[0]:r[0]+n]) {
				t.Fatalf("%s read %v: %d bytes, %v", pass, r, n, err)
			}
			if r[0]%pgPage != 0 {
				if loan.CRCs != nil {
					t.Fatalf("%s read %v: CRCs from an unaligned offset", pass, r)
				}
			} else if w := pgCRCsOf(want, r[0], r[0]+n); !slices.Equal(loan.CRCs, w) {
				t.Fatalf("%s read %v: CRCs %x, want %x", pass, r, loan.CRCs, w)
			}
			loan.Release()
			f.Close()
		}
		e.settle()
	}
}

// Opening an incomplete file opens it upstream, as the check of its
// version, and the first read uses that handle; a large file's first
// miss opens it on the rest of the streams its misses spread over.
func TestPreopenLargeFiles(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20 })
	e.file("big", 4<<20)
	e.file("small", 100<<10)
	opensReach := func(name string, before, want int64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for e.up.opens.Load()-before < want && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // none beyond want
		if got := e.up.opens.Load() - before; got != want {
			t.Errorf("%s: %d upstream opens, want %d", name, got, want)
		}
	}
	before := e.up.opens.Load()
	small := e.open("/store/small")
	opensReach("small, opened", before, 1)
	if _, err := small.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	opensReach("small, read", before, 1)
	small.Close()

	before = e.up.opens.Load()
	big := e.open("/store/big")
	defer big.Close()
	opensReach("big, opened", before, preopenFirst)
	if _, err := big.ReadAt(make([]byte, 4096), 2<<20); err != nil {
		t.Fatal(err)
	}
	opensReach("big, after a miss", before, 3) // one per stream
}

// Ready tells when the fetches a vector read's hint started have ended.
func TestReadyAfterWillNeed(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	e.up.delay = 100 * time.Millisecond
	e.file("r", 2<<20)
	f, err := e.c.Open(context.Background(), "/store/r")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cf := f.(*File)
	ranges := [][2]int64{{1000, 500}, {1 << 20, 70 << 10}}
	if ch := cf.Ready(ranges); ch != nil {
		t.Fatal("ready channel before any fetch")
	}
	cf.WillNeed(ranges)
	ch := cf.Ready(ranges)
	if ch == nil {
		t.Fatal("no channel while fetches are in flight")
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("fetches never ended")
	}
	e.settle()
	if cf.Ready(ranges) != nil {
		t.Fatal("a channel though the pages are cached")
	}
}

// A block map of version 3, with 64 KiB pages, written by an earlier
// sitebox: its pages are served and checked at that size, a missing one
// is fetched whole, and the map is saved again as version 3.
func TestVersion3MapKeepsItsPages(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("l", 1<<20+1000)
	e.read("/store/l", 1<<20)
	e.settle()
	e.c.Close()
	mp := filepath.Join(e.dir, "meta/store/l")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := blockmap.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	old := blockmap.NewVersion(3, m.BlockSize(), m.Size(), m.MTime())
	old.Validated, old.LastAccess = m.Validated, m.LastAccess
	for _, p := range []int{0, 3} {
		old.SetPages(p, []uint32{blockmap.Checksum(want[p*blockmap.LegacyPage : (p+1)*blockmap.LegacyPage])})
	}
	if err := os.WriteFile(mp, old.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	e.start()
	for _, r := range []struct {
		name     string
		off      int64
		upstream int64
	}{
		{"in a page present", 3*blockmap.LegacyPage + 100, 0},
		{"in a page missing", 5*blockmap.LegacyPage + 100, blockmap.LegacyPage},
		{"in it again", 5*blockmap.LegacyPage + 2000, 0},
	} {
		before := e.up.bytes.Load()
		if got := e.readAt("/store/l", r.off, 1000); !bytes.Equal(got, want[r.off:r.off+1000]) {
			t.Fatalf("%s: wrong bytes", r.name)
		}
		e.settle()
		if d := e.up.bytes.Load() - before; d != r.upstream {
			t.Errorf("%s: %d bytes upstream, want %d", r.name, d, r.upstream)
		}
	}
	if got := e.read("/store/l", 100<<10); !bytes.Equal(got, want) {
		t.Fatal("whole file differs")
	}
	e.settle()
	e.c.Close()
	b, _ = os.ReadFile(mp)
	if m, err := blockmap.Unmarshal(b); err != nil || binary.LittleEndian.Uint32(b[4:]) != 3 || m.PageSize() != blockmap.LegacyPage || !m.Complete() {
		t.Fatalf("saved map: %v, version %d, want version 3 with 64 KiB pages, complete", err, binary.LittleEndian.Uint32(b[4:]))
	}
	e.start()
}
