package cache

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/index"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// A file nobody has used for UpstreamIdle leaves memory for a record in
// the index; opening it again loads its block map and serves it from
// disk, without asking the upstream for data.
func TestIdleEntryBecomesRecord(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.UpstreamIdle = units.Duration(50 * time.Millisecond)
		c.Revalidate = units.Duration(time.Hour)
	})
	want := e.file("idle.bin", 200<<10)
	e.read("/store/idle.bin", 64<<10)
	e.settle()
	waitFor(t, "the entry to go idle", func() bool {
		e.c.mu.Lock()
		defer e.c.mu.Unlock()
		return len(e.c.entries) == 0 && e.c.idx.Len() == 1
	})
	if s := e.c.Stats(); s.Files != 1 || s.UsedBytes != 200<<10 {
		t.Fatalf("stats from the record: %d files, %d bytes", s.Files, s.UsedBytes)
	}
	es := e.c.Entries()
	if len(es) != 1 || es[0].Present != 4 || es[0].Blocks != 4 || es[0].CachedBytes != 200<<10 {
		t.Fatalf("listing from the record: %+v", es)
	}
	if _, err := e.c.Stat(t.Context(), "/store/idle.bin"); err != nil {
		t.Fatal(err)
	}
	before := e.up.bytes.Load()
	if got := e.read("/store/idle.bin", 32<<10); !bytes.Equal(got, want) {
		t.Fatal("wrong data after the entry went idle")
	}
	if up := e.up.bytes.Load() - before; up != 0 {
		t.Fatalf("%d bytes read upstream for a cached idle file", up)
	}
	e.c.mu.Lock()
	inIdx := e.c.idx.Len()
	e.c.mu.Unlock()
	if inIdx != 0 {
		t.Fatalf("%d records while the file is in use, want 0 (a path is in one place)", inIdx)
	}
}

// Purges take idle records oldest first and pages of `cache ls` resume
// at their cursor, whatever mix of records and entries in use.
func TestPurgeAndPagesOverRecords(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.UpstreamIdle = units.Duration(50 * time.Millisecond)
		c.Watermarks = Watermarks{HighWater: 2 << 40, LowWater: 1 << 40, FilesHighWater: 8, FilesLowWater: 5}
		c.PurgeInterval = units.Duration(time.Hour)
	})
	for i := range 10 {
		e.file(fmt.Sprintf("q/f%d", i), 10<<10)
		e.read(fmt.Sprintf("/store/q/f%d", i), 10<<10)
		time.Sleep(2 * time.Millisecond) // distinct access times
	}
	e.settle()
	waitFor(t, "all entries idle", func() bool {
		e.c.mu.Lock()
		defer e.c.mu.Unlock()
		return len(e.c.entries) == 0
	})
	open, err := e.c.Open(t.Context(), "/store/q/f1") // in use: a live entry between records
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	var paged []string
	for after := ""; ; {
		page, err := e.c.EntriesPage("/store/q", after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range page {
			paged = append(paged, strings.TrimPrefix(p.Path, "/store/q/"))
		}
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1].Path
	}
	if want := []string{"f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"}; !slices.Equal(paged, want) {
		t.Fatalf("pages: %v, want %v", paged, want)
	}
	e.c.purgeOnce()
	var kept []string
	for _, en := range e.c.Entries() {
		kept = append(kept, strings.TrimPrefix(en.Path, "/store/q/"))
	}
	// f1 is in use; the four oldest others go (files 10 -> low mark 5,
	// f1 counts).
	if want := []string{"f1", "f6", "f7", "f8", "f9"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Evicting a directory removes its idle records (and their files) as
// well as the entries in memory, keeping the ones in use.
func TestEvictRecords(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.UpstreamIdle = units.Duration(50 * time.Millisecond) })
	for i := range 5 {
		e.file(fmt.Sprintf("v/f%d", i), 10<<10)
		e.read(fmt.Sprintf("/store/v/f%d", i), 10<<10)
	}
	e.file("w", 10<<10)
	e.read("/store/w", 10<<10)
	e.settle()
	waitFor(t, "all entries idle", func() bool {
		e.c.mu.Lock()
		defer e.c.mu.Unlock()
		return len(e.c.entries) == 0
	})
	open, err := e.c.Open(t.Context(), "/store/v/f3")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	err = e.c.Evict(t.Context(), "/store/v")
	if !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), "1 of 5 cached files are open") {
		t.Fatalf("evict: %v, want busy with 1 of 5", err)
	}
	var kept []string
	for _, en := range e.c.Entries() {
		kept = append(kept, en.Path)
	}
	if want := []string{"/store/v/f3", "/store/w"}; !slices.Equal(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "meta/store/v/f1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("block map of an evicted record still on disk: %v", err)
	}
}

// BenchmarkIndexMemory reports the memory a million idle cached files
// take as records, next to what they took as entries with block maps.
func BenchmarkIndexMemory(b *testing.B) {
	const n = 1_000_000
	heapNow := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	now := time.Now()
	for range b.N {
		before := heapNow()
		x := index.New()
		for i := range n {
			m := blockmap.New(1<<20, 4096, now)
			m.SetPages(0, []uint32{1})
			x.Add(recordOf(fmt.Sprintf("/store/d%03d/f%07d", i%1000, i), m))
		}
		b.ReportMetric(float64(heapNow()-before)/n, "B/record")
		runtime.KeepAlive(&x)
		before = heapNow()
		es := map[string]*entry{}
		for i := range n {
			p := fmt.Sprintf("/store/d%03d/f%07d", i%1000, i)
			es[p] = &entry{path: p, m: blockmap.New(1<<20, 4096, now)}
		}
		b.ReportMetric(float64(heapNow()-before)/n, "B/entry")
		runtime.KeepAlive(es)
	}
}
