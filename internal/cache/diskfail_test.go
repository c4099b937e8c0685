package cache

import (
	"bytes"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/internal/units"
)

// A cache whose disk fails keeps nothing, so bytes fetched ahead of a
// reader (read-ahead, prefetch) would be fetched again when the reader
// gets there: it stops fetching ahead, and the upstream sends no more
// than the clients read.
func TestDiskFailureStopsFetchingAhead(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	e := newEnv(t, func(c *Config) {
		c.Dir = dir
		c.DiskRetry = time.Hour
		c.Prefetch = true
		c.Watermarks = Watermarks{HighWater: 1 << 40, LowWater: 1 << 39, FilesHighWater: 1e9, FilesLowWater: 1e8}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	fill := e.file("fill", 2<<20)
	if got := e.read("/store/fill", 256<<10); !bytes.Equal(got, fill) {
		t.Fatal("data differs")
	}
	e.settle()
	if s := e.c.Stats(); s.DiskError == "" {
		t.Fatalf("the disk did not fail: %+v", s)
	}
	const size = 3 << 20
	want := e.file("big", size)
	before := e.up.bytes.Load()
	if got := e.read("/store/big", 64<<10); !bytes.Equal(got, want) { // whole blocks: a partial block read on a failed disk is fetched whole each time
		t.Fatal("data differs on a failed disk")
	}
	e.settle()
	if up := e.up.bytes.Load() - before; up > size {
		t.Errorf("upstream sent %d bytes for %d read: fetching ahead on a failed disk", up, size)
	}
}
