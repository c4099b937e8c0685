package cache

import (
	"testing"
	"time"
)

// diskAccess returns the last access the block map on disk records for p.
func (e *env) diskAccess(p string) time.Time {
	e.t.Helper()
	m, err := e.c.disk.LoadMap(p)
	if err != nil {
		e.t.Fatalf("map of %s: %v", p, err)
	}
	return m.LastAccess
}

// ageAccess moves p's last access back an hour, in memory and on disk, as
// if it was last read then.
func (e *env) ageAccess(p string) time.Time {
	e.t.Helper()
	e.c.mu.Lock()
	en := e.c.entries[p]
	e.c.mu.Unlock()
	en.mu.Lock()
	en.m.LastAccess = time.Now().Add(-time.Hour)
	en.dirty = true
	old := en.m.LastAccess
	en.mu.Unlock()
	if err := en.flush(); err != nil {
		e.t.Fatal(err)
	}
	return old
}

// A close that only read cached data does not save the block map: the
// save syncs the data file and the map, and an analysis job opening many
// files would wait for both on every close. Closing the cache saves it.
// (The cache is not run here, so no flusher can save it meanwhile.)
func TestReadOnlyCloseDoesNotSaveMap(t *testing.T) {
	e := newEnv(t, nil)
	want := e.file("a", 256<<10)
	e.read("/store/a", 64<<10)
	e.settle()
	old := e.ageAccess("/store/a")
	c := e.idleCache()
	e.c = c
	e.readCached("/store/a", want)
	if at := e.diskAccess("/store/a"); !at.Equal(old) {
		t.Fatalf("the close saved the map (last access %v, was %v)", at, old)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	e.c = e.idleCache()
	if at := e.diskAccess("/store/a"); at.Equal(old) || time.Since(at) > time.Minute {
		t.Fatalf("after closing the cache the map's last access is %v, want the read's", at)
	}
}

// idleCache closes the running cache and opens its directory again
// without running it: no flusher, writer or scan.
func (e *env) idleCache() *Cache {
	e.t.Helper()
	e.c.Close()
	c, err := New(e.cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// The flusher saves the last access of a file closed since its last
// tick.
func TestFlusherSavesAccess(t *testing.T) {
	e := newEnv(t, nil)
	e.file("a", 256<<10)
	e.read("/store/a", 64<<10)
	e.settle()
	old := e.ageAccess("/store/a")
	e.read("/store/a", 64<<10)
	deadline := time.Now().Add(10 * time.Second)
	for e.diskAccess("/store/a").Equal(old) {
		if time.Now().After(deadline) {
			t.Fatal("the flusher did not save the new last access")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if at := e.diskAccess("/store/a"); time.Since(at) > time.Minute {
		t.Fatalf("saved last access %v, want about now", at)
	}
}

// An idle file is not forgotten (its map leaving memory for a record)
// while its last access waits to be saved: its late save could land over
// the map of the entry that replaces it.
func TestTouchedEntryStaysUntilSaved(t *testing.T) {
	e := newEnv(t, nil)
	e.file("a", 256<<10)
	e.read("/store/a", 64<<10)
	e.settle()
	e.ageAccess("/store/a")
	c := e.idleCache() // no flusher to save it meanwhile
	e.c = c
	e.read("/store/a", 64<<10)

	forget := func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		en := c.entries["/store/a"]
		en.up.CloseAll(nil)
		c.markBusyLocked(en)
		c.forgetLocked(en)
		_, kept := c.entries["/store/a"]
		return kept
	}
	if !forget() {
		t.Fatal("the entry left memory before its last access was saved")
	}
	c.saveTouched()
	if forget() {
		t.Fatal("the entry stayed in memory after its last access was saved")
	}
}
