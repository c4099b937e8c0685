package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
	"sitebox/internal/units"
)

// Two upstreams: when the first dies mid-file, the rest of the file comes
// from the second; with both dead, reads fail cleanly.
func TestFailover(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReadAhead = -1 })
	second := e.withSecondUpstream()

	want := e.file("f", 512<<10)
	f, err := e.c.Open(context.Background(), "/store/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 128<<10)
	if _, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, want[:len(buf)]) {
		t.Fatalf("first part: %v", err)
	}
	e.up.fail.Store(true) // the first upstream is cut
	if _, err := f.ReadAt(buf, 256<<10); err != nil || !bytes.Equal(buf, want[256<<10:256<<10+len(buf)]) {
		t.Fatalf("after the cut: %v", err)
	}
	if second.bytes.Load() == 0 {
		t.Fatal("second upstream was not used")
	}
	second.fail.Store(true)
	if _, err := f.ReadAt(buf, 384<<10); err == nil {
		t.Fatal("read with every upstream down succeeded")
	} else if !errors.Is(err, store.ErrIO) {
		t.Fatalf("error does not say I/O: %v", err)
	}
	// Upstreams back: the same handle reads again (once the failed read's
	// other block has finished failing: a read joining that fetch would
	// share its error).
	e.settle()
	e.up.fail.Store(false)
	second.fail.Store(false)
	if _, err := f.ReadAt(buf, 384<<10); err != nil || !bytes.Equal(buf, want[384<<10:384<<10+len(buf)]) {
		t.Fatalf("after recovery: %v", err)
	}
}

// An upstream returning fewer bytes than asked is an error, never short
// data in the cache.
func TestShortUpstreamReadIsAnError(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ReadAhead = -1 })
	want := e.file("s", 256<<10)
	f, err := e.c.Open(context.Background(), "/store/s")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e.up.short.Store(true)
	buf := make([]byte, 100<<10)
	if n, err := f.ReadAt(buf, 0); err == nil {
		t.Fatalf("short upstream read served %d bytes without error", n)
	}
	e.settle() // the read's other block may still be failing its fetch
	e.up.short.Store(false)
	if n, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf[:n], want[:n]) || n != len(buf) {
		t.Fatalf("after: %d %v", n, err)
	}
}

// With no RAM left for block buffers, reads still succeed, uncached.
func TestBypassWhenRAMIsShort(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RAM = 4 * c.BlockSize; c.ReadAhead = -1 })
	want := e.file("b", 1<<20)
	held := [][]byte{}
	for b := e.c.budget.get(1); b != nil; b = e.c.budget.get(1) {
		held = append(held, b)
	}
	if got := e.read("/store/b", 200<<10); !bytes.Equal(got, want) {
		t.Fatal("bypass read differs")
	}
	s := e.c.Stats()
	if s.BypassBytes != int64(len(want)) || s.WrittenBytes != 0 {
		t.Fatalf("stats %+v", s)
	}
	for _, b := range held {
		e.c.budget.put(b)
	}
}

// Usage over the high mark is purged to under the low mark, least
// recently used first, never an open file.
func TestPurgeWatermarks(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Watermarks = Watermarks{HighWater: 3 << 20, LowWater: 2 << 20, FilesHighWater: 100, FilesLowWater: 50}
		c.PurgeInterval = units.Duration(time.Hour)
		c.UpstreamIdle = units.Duration(time.Hour) // the entries stay in memory, where the test sets their access times
	})
	ctx := context.Background()
	for i := range 6 {
		e.file(fmt.Sprintf("p%d", i), 1<<20)
	}
	// p0 is the oldest access but stays open.
	e.read("/store/p0", 1<<20)
	open, err := e.c.Open(ctx, "/store/p0")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	// Under the locks: the disk writer may still be releasing the file
	// and saving its map.
	setAccess := func(p string, at time.Time) {
		e.c.mu.Lock()
		en := e.c.entries[p]
		e.c.mu.Unlock()
		en.mu.Lock()
		en.m.LastAccess = at
		en.mu.Unlock()
	}
	for i := 1; i < 6; i++ {
		time.Sleep(10 * time.Millisecond)
		e.read(fmt.Sprintf("/store/p%d", i), 1<<20)
		e.settle()
		setAccess(fmt.Sprintf("/store/p%d", i), time.Now().Add(time.Duration(i)*time.Second))
	}
	setAccess("/store/p0", time.Unix(0, 0))
	if u := e.c.Stats().UsedBytes; u != 6<<20 {
		t.Fatalf("used %d before purge", u)
	}
	e.c.purgeOnce()
	s := e.c.Stats()
	if s.UsedBytes > 2<<20 {
		t.Fatalf("used %d after purge, low mark %d", s.UsedBytes, 2<<20)
	}
	kept := map[string]bool{}
	for _, en := range e.c.Entries() {
		kept[en.Path] = true
	}
	if !kept["/store/p0"] || !kept["/store/p5"] || kept["/store/p1"] {
		t.Fatalf("kept %v: want the open p0 and the newest p5", kept)
	}
	if s.EvictedFiles != 4 || s.EvictedBytes != 4<<20 {
		t.Fatalf("evicted %d files, %d bytes", s.EvictedFiles, s.EvictedBytes)
	}
}

// A purge that falls short because files were open at that moment keeps
// aiming for the low mark on later checks, though usage is now under the
// high mark (it would otherwise stay between the marks for ever).
func TestPurgeFinishesAfterFilesClose(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Watermarks = Watermarks{HighWater: 3 << 20, LowWater: 2 << 20, FilesHighWater: 100, FilesLowWater: 50}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	ctx := context.Background()
	var open []store.File
	for i := range 4 {
		e.file(fmt.Sprintf("q%d", i), 1<<20)
		e.read(fmt.Sprintf("/store/q%d", i), 1<<20)
		e.settle()
		if i < 3 { // held open during the first pass
			f, err := e.c.Open(ctx, fmt.Sprintf("/store/q%d", i))
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, f)
		}
		time.Sleep(10 * time.Millisecond)
	}
	e.c.purgeOnce() // 4 MiB, 2 to free: only q3 may go
	if u := e.c.Stats().UsedBytes; u != 3<<20 {
		t.Fatalf("first pass left %d bytes", u)
	}
	for _, f := range open {
		f.Close()
	}
	// 3 MiB is not over the high mark, but the job is not done.
	e.c.purgeOnce()
	if u := e.c.Stats().UsedBytes; u > 2<<20 {
		t.Fatalf("second pass left %d bytes, low mark %d", u, 2<<20)
	}
	// Done: no further pass below the high mark evicts anything.
	e.file("q9", 1<<20)
	e.read("/store/q9", 1<<20)
	e.settle()
	before := e.c.Stats().EvictedFiles
	e.c.purgeOnce()
	if e.c.Stats().EvictedFiles != before {
		t.Error("a pass under the high mark evicted after the purge had finished")
	}
}

func TestFilesWatermark(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Watermarks = Watermarks{HighWater: 1 << 40, LowWater: 1 << 39, FilesHighWater: 4, FilesLowWater: 2}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	for i := range 6 {
		e.file(fmt.Sprintf("n%d", i), 1000)
		e.read(fmt.Sprintf("/store/n%d", i), 1000)
	}
	e.settle()
	e.c.purgeOnce()
	if n := e.c.Stats().Files; n > 2 {
		t.Fatalf("%d files after purge, low mark 2", n)
	}
}

func TestEvict(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.file("d/a", 1000)
	e.file("d/b", 1000)
	e.read("/store/d/a", 1000)
	e.read("/store/d/b", 1000)
	e.settle()
	f, _ := e.c.Open(ctx, "/store/d/b")
	err := e.c.Evict(ctx, "/store/d")
	if !errors.Is(err, store.ErrBusy) {
		t.Fatalf("evict with an open file: %v", err)
	}
	f.Close()
	if err := e.c.Evict(ctx, "/store/d/b"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Evict(ctx, "/store/d"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("evict of nothing: %v", err)
	}
	if err := e.c.Evict(ctx, "/store/../x"); err == nil {
		t.Fatal("evict accepted ..")
	}
}

func TestPrefetchWholeFile(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Prefetch = true })
	want := e.file("w", 2<<20)
	f, err := e.c.Open(context.Background(), "/store/w")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	f.ReadAt(buf, 0)
	f.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		es := e.c.Entries()
		if len(es) == 1 && es[0].Present == es[0].Blocks {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prefetch incomplete: %+v", es)
		}
		time.Sleep(10 * time.Millisecond)
	}
	before := e.up.bytes.Load()
	if got := e.read("/store/w", 1<<20); !bytes.Equal(got, want) || e.up.bytes.Load() != before {
		t.Fatal("prefetched file not served from disk")
	}
}

// On a full cache disk, reads are served uncached, the failure is
// reported, and caching resumes once space is back.
func TestDiskFullServesUncached(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	e := newEnv(t, func(c *Config) {
		c.Dir = dir
		c.DiskRetry = 100 * time.Millisecond
		c.Watermarks = Watermarks{HighWater: 1 << 40, LowWater: 1 << 39, FilesHighWater: 1e9, FilesLowWater: 1e8}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	want := e.file("big", 3<<20)
	if got := e.read("/store/big", 256<<10); !bytes.Equal(got, want) {
		t.Fatal("data differs on a full disk")
	}
	e.settle()
	if s := e.c.Stats(); s.DiskError == "" {
		t.Fatalf("no disk error reported: %+v", s)
	}
	if got := e.read("/store/big", 1<<20); !bytes.Equal(got, want) {
		t.Fatal("data differs on a full disk (second read)")
	}
	// Space comes back: the cache writes again.
	if err := e.c.Evict(context.Background(), "/store/big"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	small := e.file("small", 100<<10)
	if got := e.read("/store/small", 64<<10); !bytes.Equal(got, small) {
		t.Fatal("data differs after recovery")
	}
	e.settle()
	if s := e.c.Stats(); s.DiskError != "" || len(e.c.Entries()) != 1 {
		t.Fatalf("did not recover: %+v %+v", s, e.c.Entries())
	}
}

// Watermarks lowered on a running cache (a reload) apply at the next
// purge pass; the purge interval stays.
func TestSetWatermarks(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Watermarks = Watermarks{HighWater: 100 << 20, LowWater: 90 << 20, FilesHighWater: 100, FilesLowWater: 50}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	for i := range 4 {
		e.file(fmt.Sprintf("w%d", i), 1<<20)
		e.read(fmt.Sprintf("/store/w%d", i), 1<<20)
		e.settle()
	}
	e.c.purgeOnce()
	if u := e.c.Stats().UsedBytes; u != 4<<20 {
		t.Fatalf("used %d under the first marks; want 4 MiB kept", u)
	}
	e.c.SetWatermarks(Watermarks{HighWater: 2 << 20, LowWater: 1 << 20, FilesHighWater: 100, FilesLowWater: 50})
	e.c.purgeOnce()
	if u := e.c.Stats().UsedBytes; u > 1<<20 {
		t.Fatalf("used %d after the marks were lowered to 1 MiB", u)
	}
	if e.c.cfg.PurgeInterval.D() != time.Hour {
		t.Errorf("interval %v; want the one the cache started with", e.c.cfg.PurgeInterval)
	}
}
