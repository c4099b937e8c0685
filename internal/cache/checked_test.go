package cache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"sitebox/internal/cache/blockmap"
)

// pageAt64K is the page holding the bytes at 64 KiB, which these tests
// read.
const pageAt64K = 64 << 10 / blockmap.CheckPage

// A page is checked when written through the page cache or read from
// disk; read again from the page cache it is not, but once the kernel
// has dropped it, bytes gone bad on disk are caught on the next read and
// the page is refetched.
func TestCheckedPagesAreCheckedAgainFromDisk(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("k", 256<<10)
	f := e.open("/store/k")
	defer f.Close()
	const off, n = 64<<10 + 100, 1000
	read := func(what string) {
		t.Helper()
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, off); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.Equal(buf, want[off:off+n]) {
			t.Fatalf("%s: wrong bytes", what)
		}
	}
	checked := func() bool {
		f.e.mu.Lock()
		defer f.e.mu.Unlock()
		return f.e.m.Checked(pageAt64K, pageAt64K+1)
	}
	read("miss")
	e.settle()
	if !checked() {
		t.Fatal("a page written through the page cache does not count as checked")
	}
	read("hit from the page cache")

	// Flip a byte on disk, then make the kernel drop its cached copy.
	df, err := os.OpenFile(filepath.Join(e.dir, "data/store/k"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	df.WriteAt([]byte{want[off+10] ^ 0x21}, off+10)
	dropPageCache(t, df)
	before := e.up.bytes.Load()
	read("after the disk went bad")
	if c := e.c.Stats().CorruptBlocks; c != 1 {
		t.Fatalf("corrupt = %d, want 1", c)
	}
	e.settle()
	if d := e.up.bytes.Load() - before; d != blockmap.CheckPage {
		t.Fatalf("refetched %d bytes, want one page", d)
	}
	read("after the repair")

	// Without the written bits (a restart), the first read from disk
	// checks the page and marks it.
	f.Close()
	e.restart()
	f = e.open("/store/k")
	defer f.Close()
	if checked() {
		t.Fatal("a page counts as checked after a restart")
	}
	read("first read after the restart")
	if !checked() {
		t.Fatal("the page read from disk was not marked checked")
	}
}

// dropPageCache writes f's dirty pages to disk and drops its cached
// pages, so the next read of it comes from the disk.
func dropPageCache(t *testing.T, f *os.File) {
	t.Helper()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}

// A file that leaves memory while idle keeps its checked bits in its
// index record: the next job to open it copies pages, not checks them.
func TestCheckedBitsSurviveIdle(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("i", 256<<10)
	checked := func(f *File) bool {
		f.e.mu.Lock()
		defer f.e.mu.Unlock()
		return f.e.m.Checked(pageAt64K, pageAt64K+1)
	}
	f := e.open("/store/i")
	buf := make([]byte, 1000)
	if _, err := f.ReadAt(buf, 64<<10+5); err != nil {
		t.Fatal(err)
	}
	e.settle()
	if !checked(f) {
		t.Fatal("page not checked after it was written")
	}
	f.Close()
	if n := e.forgetIdle(); n == 0 {
		t.Fatal("the idle file kept its upstream handles")
	}
	f = e.open("/store/i")
	defer f.Close()
	if !checked(f) {
		t.Fatal("the checked bits did not come back with the file")
	}
	if _, err := f.ReadAt(buf, 64<<10+5); err != nil || !bytes.Equal(buf, want[64<<10+5:][:1000]) {
		t.Fatalf("read after the file came back: %v", err)
	}
}

// A read planned while its page was checked copies it from the page cache
// only if no check was forgotten meanwhile: here the kernel drops the
// page after the plan and another reader, forgetting its check, reads it
// back from disk, where it has gone bad. The planned read must not take
// those bytes for checked ones.
func TestCheckForgottenAfterPlan(t *testing.T) {
	const off, end = 64<<10 + 100, 64<<10 + 1100
	e, ent, slots, want := planChecked(t, "r", 256<<10, off, end) // reader B
	df, err := os.OpenFile(filepath.Join(e.dir, "data/store/r"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	df.WriteAt([]byte{want[off+10] ^ 0x40}, off+10)
	dropPageCache(t, df)
	// Reader A finds the page gone: it forgets the check and reads the
	// page from disk, into the page cache, to check it.
	ent.uncheckPiece(slots[0])
	if _, err := df.ReadAt(make([]byte, blockmap.CheckPage), 64<<10); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, end-off)
	if err := ent.serve(slots, got, off, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[off:end]) {
		t.Fatal("served bad bytes from the page cache as checked")
	}
	if c := e.c.Stats().CorruptBlocks; c != 1 {
		t.Fatalf("corrupt = %d, want 1", c)
	}
}

// A read that finds a check of the file forgotten since it was planned,
// elsewhere in the file, reads and checks its own pages from the page
// cache without forgetting their checks: forgetting them would send the
// reads other threads planned meanwhile down the same path, and theirs
// the next.
func TestForgottenElsewhereDoesNotSpread(t *testing.T) {
	const off, end = 64<<10 + 100, 64<<10 + 1100
	_, ent, slots, want := planChecked(t, "s", 512<<10, off, end)
	ent.mu.Lock()
	ent.m.Uncheck(5) // another reader's page
	forgets := ent.m.Forgets()
	ent.mu.Unlock()
	got := make([]byte, end-off)
	if err := ent.serve(slots, got, off, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[off:end]) {
		t.Fatal("wrong bytes")
	}
	ent.mu.Lock()
	defer ent.mu.Unlock()
	if ent.m.Forgets() != forgets || !ent.m.Checked(pageAt64K, pageAt64K+1) {
		t.Fatalf("forgets %d (was %d), page checked %v: the read forgot its own page's check", ent.m.Forgets(), forgets, ent.m.Checked(pageAt64K, pageAt64K+1))
	}
}

// planChecked caches a file of size bytes whole, then plans a read of
// [off, end) within one of its pages, which must be one checked slot.
func planChecked(t *testing.T, name string, size int, off, end int64) (*env, *entry, []piece, []byte) {
	t.Helper()
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file(name, size)
	f := e.open("/store/" + name)
	t.Cleanup(func() { f.Close() })
	if _, err := f.ReadAt(make([]byte, size), 0); err != nil {
		t.Fatal(err)
	}
	e.settle()
	f.e.mu.Lock()
	slots, fresh := f.e.piecesLocked(off, end, false)
	f.e.mu.Unlock()
	if len(fresh) != 0 || len(slots) != 1 || !slots[0].checked {
		t.Fatalf("planned %+v, want one checked slot", slots)
	}
	return e, f.e, slots, want
}

// A copy dropped while a reader has the file open (found bad, or changed
// upstream) takes its pages' presence and checks with it: the reader's
// next read fetches them again, rather than reading the new, empty data
// file and taking its zeros for cached bytes.
func TestDroppedCopyIsFetchedAgain(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("k", 256<<10)
	f := e.open("/store/k")
	defer f.Close()
	buf := make([]byte, 1000)
	const off = 64<<10 + 100
	for range 2 { // a miss, then a checked hit
		if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, want[off:off+1000]) {
			t.Fatalf("before the drop: %v or wrong bytes", err)
		}
		e.settle()
	}
	f.e.mu.Lock()
	f.e.dropLocked()
	present := f.e.m.Has(pageAt64K) || f.e.m.Checked(pageAt64K, pageAt64K+1)
	f.e.mu.Unlock()
	if present {
		t.Fatal("the dropped copy's page still counts as present or checked")
	}
	before := e.up.bytes.Load()
	if _, err := f.ReadAt(buf, off); err != nil || !bytes.Equal(buf, want[off:off+1000]) {
		t.Fatalf("after the drop: %v or wrong bytes", err)
	}
	if e.up.bytes.Load() == before {
		t.Fatal("the page was not fetched again")
	}
	if c := e.c.Stats().CorruptBlocks; c != 0 {
		t.Fatalf("corrupt = %d: the read took the empty data file for the copy", c)
	}
}
