package cache

import (
	"testing"

	"sitebox/internal/cache/blockmap"
)

// A stream read from disk forgets the checks of the pages the kernel may
// read ahead of it (they may come back from disk unchecked), and only
// those.
func TestStreamReadForgetsChecksAhead(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.BlockSize = 1 << 20; c.ReadAhead = -1 })
	want := e.file("s", 8<<20)
	e.c.disk.SetStreamReach(5 << 20)
	f := e.open("/store/s")
	defer f.Close()
	read := func(off int64, n int) {
		t.Helper()
		readWanting(t, f, want, off, n)
		e.settle()
	}
	checked := func(p int) bool {
		f.e.mu.Lock()
		defer f.e.mu.Unlock()
		return f.e.m.Checked(p, p+1)
	}
	read(0, 1<<20) // block 0 cached
	near, far := 5<<20/blockmap.CheckPage, 7<<20/blockmap.CheckPage
	read(5<<20+100, 1000) // page near, written through the page cache: checked
	read(7<<20+100, 1000) // page far, likewise
	if !checked(near) || !checked(far) {
		t.Fatal("pages written through the page cache are not checked")
	}
	read(0, 1<<20) // block 0 again, from disk, as a stream
	if checked(near) {
		t.Fatal("a page within the read-ahead reach kept its check")
	}
	if !checked(far) {
		t.Fatal("a page past the read-ahead reach lost its check")
	}
	if !checked(0) || !checked(15) {
		t.Fatal("the stream's own pages were not checked")
	}
}
