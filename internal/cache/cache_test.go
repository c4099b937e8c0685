package cache

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

func TestReadThroughThenFromDisk(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("a/f.bin", 1<<20+12345) // not a multiple of the block size
	for _, chunk := range []int{1 << 20, 4096, 100000} {
		if got := e.read("/store/a/f.bin", chunk); !bytes.Equal(got, want) {
			t.Fatalf("chunk %d: data differs", chunk)
		}
		e.settle()
	}
	first := e.up.bytes.Load()
	if first < int64(len(want)) || first > int64(len(want))+int64(e.cfg.BlockSize.Bytes())*int64(e.cfg.ReadAhead) {
		t.Fatalf("first read fetched %d upstream bytes for a %d-byte file", first, len(want))
	}
	before := e.up.bytes.Load()
	if got := e.read("/store/a/f.bin", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("second read differs")
	}
	if d := e.up.bytes.Load() - before; d != 0 {
		t.Fatalf("second full read fetched %d upstream bytes, want 0", d)
	}
	s := e.c.Stats()
	if s.HitBytes == 0 || s.MissBytes == 0 || s.UsedBytes != int64(len(want)) || s.Files != 1 {
		t.Fatalf("stats %+v", s)
	}
	// Past the end and at the end.
	f, _ := e.c.Open(context.Background(), "/store/a/f.bin")
	defer f.Close()
	if n, err := f.ReadAt(make([]byte, 10), int64(len(want))); n != 0 || err != io.EOF {
		t.Fatalf("read at EOF: %d, %v", n, err)
	}
	buf := make([]byte, 100)
	if n, err := f.ReadAt(buf, int64(len(want))-40); n != 40 || err != io.EOF || !bytes.Equal(buf[:40], want[len(want)-40:]) {
		t.Fatalf("read across EOF: %d, %v", n, err)
	}
}

func TestCoalescing(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReadAhead = -1 })
	e.up.delay = 2 * time.Millisecond // keep fetches in flight while others arrive
	want := e.file("big", 4<<20)
	parallel(10, func(int) {
		if got := e.read("/store/big", 256<<10); !bytes.Equal(got, want) {
			t.Error("data differs")
		}
	})
	e.settle()
	if got := e.up.bytes.Load(); got > int64(len(want))+e.cfg.BlockSize.Bytes() {
		t.Fatalf("10 readers caused %d upstream bytes for a %d-byte file", got, len(want))
	}
	if e.c.Stats().CoalescedWaits == 0 {
		t.Fatal("no coalesced waits counted")
	}
}

func TestSparseReadCachesOnlyWhatWasRead(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReadAhead = -1 })
	want := e.file("sparse", 8<<20)
	f, err := e.c.Open(context.Background(), "/store/sparse")
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{0, 3 << 20, 7<<20 + 5} {
		buf := make([]byte, 10000)
		if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, want[off:off+10000]) {
			t.Fatalf("read at %d: %v", off, err)
		}
	}
	f.Close()
	e.settle()
	es := e.c.Entries()
	if len(es) != 1 || es[0].Present > 4 || es[0].CachedBytes > 4*e.cfg.BlockSize.Bytes() {
		t.Fatalf("entries %+v", es)
	}
}

func TestCorruptBlockIsRefetched(t *testing.T) {
	// Residency is asked with cachestat, or with mincore on kernels
	// before 6.5 (residentNow).
	for _, mincore := range []bool{false, true} {
		name := map[bool]string{false: "cachestat", true: "mincore"}[mincore]
		t.Run(name, func(t *testing.T) { testCorruptBlockIsRefetched(t, mincore) })
	}
}

func testCorruptBlockIsRefetched(t *testing.T, mincore bool) {
	e := newEnv(t, nil)
	e.c.disk.AskMincore(mincore)
	want := e.file("c", 300<<10)
	e.read("/store/c", 64<<10)
	e.settle()
	// Flip one byte inside block 2 of the cached data.
	p := filepath.Join(e.dir, "data/store/c")
	df, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	df.ReadAt(b, 2*64<<10+77)
	b[0] ^= 0x40
	df.WriteAt(b, 2*64<<10+77)
	// Bad bytes are the disk's: the page cache keeps what the cache
	// wrote (see checked.go), so drop it as the kernel would.
	dropPageCache(t, df)
	df.Close()
	before := e.up.bytes.Load()
	if got := e.read("/store/c", 1000); !bytes.Equal(got, want) {
		t.Fatal("served corrupt data")
	}
	e.settle()
	if d, page := e.up.bytes.Load()-before, min(blockmap.CheckPage, e.cfg.BlockSize.Bytes()); d != page {
		t.Fatalf("refetched %d bytes, want the one page (%d)", d, page)
	}
	if e.c.Stats().CorruptBlocks != 1 {
		t.Fatalf("corrupt blocks = %d", e.c.Stats().CorruptBlocks)
	}
	if got := e.read("/store/c", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("data differs after repair")
	}
}

func TestRestartKeepsWhatReachedDisk(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("r", 1<<20)
	e.read("/store/r", 64<<10)
	e.settle()
	e.restart()
	before := e.up.bytes.Load()
	if got := e.read("/store/r", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("data differs after restart")
	}
	if d := e.up.bytes.Load() - before; d != 0 {
		t.Fatalf("read after restart fetched %d bytes", d)
	}
}

// A block map that claims blocks the data file does not hold (a crash
// between the two) must not serve zeros: the CRCs catch it.
func TestMapAheadOfDataIsNotTrusted(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("m", 512<<10)
	e.read("/store/m", 64<<10)
	e.settle()
	e.c.Close()
	os.Truncate(filepath.Join(e.dir, "data/store/m"), 100<<10) // lose most data
	e.start()
	if got := e.read("/store/m", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("served data the disk did not hold")
	}
	if e.c.Stats().CorruptBlocks == 0 {
		t.Fatal("lost blocks were not detected")
	}
}

func TestTornMapIsDropped(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("t", 200<<10)
	e.read("/store/t", 64<<10)
	e.settle()
	e.c.Close()
	mp := filepath.Join(e.dir, "meta/store/t")
	b, _ := os.ReadFile(mp)
	os.WriteFile(mp, b[:len(b)/2], 0o644)
	e.start()
	if len(e.c.Entries()) != 0 {
		t.Fatalf("torn map was loaded: %+v", e.c.Entries())
	}
	if _, err := os.Stat(filepath.Join(e.dir, "data/store/t")); !os.IsNotExist(err) {
		t.Fatal("data of a torn map was kept")
	}
	if got := e.read("/store/t", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("data differs")
	}
}

func TestRevalidationDropsChangedFile(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Revalidate = units.Duration(time.Nanosecond) })
	e.file("v", 100<<10)
	e.read("/store/v", 64<<10)
	e.settle()
	want := e.replace("v", 150<<10)
	if got := e.read("/store/v", 64<<10); !bytes.Equal(got, want) {
		t.Fatal("served the old version")
	}
	// Within the interval, no upstream check: a change goes unseen.
	e2 := newEnv(t, func(c *Config) { c.Revalidate = units.Duration(time.Hour) })
	old := e2.file("v", 100<<10)
	e2.read("/store/v", 64<<10)
	e2.settle()
	e2.file("v", 100<<10)
	if got := e2.read("/store/v", 64<<10); !bytes.Equal(got, old) {
		t.Fatal("revalidated within the interval")
	}
}

func TestFileGoneUpstream(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Revalidate = units.Duration(time.Nanosecond) })
	e.file("g", 100<<10)
	e.read("/store/g", 64<<10)
	e.settle()
	os.Remove(filepath.Join(e.src, "g"))
	if _, err := e.c.Open(context.Background(), "/store/g"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("open of a deleted file: %v", err)
	}
	if len(e.c.Entries()) != 0 {
		t.Fatalf("deleted file still cached: %+v", e.c.Entries())
	}
}

func TestBadPathsAndWrites(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	for _, p := range []string{"/other/x", "/store/../etc/passwd", "/store/a\x00b", ""} {
		if _, err := e.c.Open(ctx, p); err == nil {
			t.Errorf("open %q succeeded", p)
		}
	}
	if _, err := e.c.Open(ctx, "/store/missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := e.c.Create(ctx, "/store/new", store.CreateOptions{}); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("create: %v", err)
	}
	os.MkdirAll(filepath.Join(e.src, "dir"), 0o755)
	if _, err := e.c.Open(ctx, "/store/dir"); !errors.Is(err, store.ErrIsDir) {
		t.Errorf("open dir: %v", err)
	}
}

// TestServesBeforeScan: a cached file opened before the start-up scan
// reached it is served from its cached blocks (its map loaded on the
// spot), not fetched again, and the scan then leaves its entry alone.
func TestServesBeforeScan(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("early", 300<<10)
	e.read("/store/early", 64<<10)
	e.settle()
	e.c.Close()
	c, err := New(e.cfg, nil) // not run yet: no scan
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	e.readCached("/store/early", want) // before the scan
	run(t, c)
	<-c.scanned
	if n := len(c.Entries()); n != 1 {
		t.Errorf("%d entries after the scan, want 1", n)
	}
}
