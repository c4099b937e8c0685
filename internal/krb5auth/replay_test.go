package krb5auth

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable time for the replay cache.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixMicro())
	return c
}
func (c *clock) now() time.Time          { return time.UnixMicro(c.t.Load()) }
func (c *clock) advance(d time.Duration) { c.t.Add(d.Microseconds()) }

func tagOf(s string) replayTag {
	var t replayTag
	copy(t[:], s)
	return t
}

func openTestCache(t *testing.T, path string, clk *clock) *replayCache {
	t.Helper()
	c, err := openReplayCache(path, time.Minute, clk.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.close() })
	return c
}

// onDisk reads the records the file holds now, as a restart after a
// crash would.
func onDisk(t *testing.T, path string) []replayRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseReplay(data)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// An accepted authenticator is on disk when add returns, and refused
// after a restart (here: the cache opened again) within the skew.
func TestReplayCacheSurvivesRestart(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "kerberos", "replay-cache")
	c := openTestCache(t, path, clk)
	client := clientTag{1}
	if err := c.add(tagOf("a"), client, clk.now()); err != nil {
		t.Fatal(err)
	}
	if recs := onDisk(t, path); len(recs) != 1 || recs[0].tag != tagOf("a") {
		t.Fatalf("after add the file holds %v, want the authenticator", recs)
	}
	if err := c.add(tagOf("a"), client, clk.now()); !errors.Is(err, errReplay) {
		t.Fatalf("replay in the same process: %v", err)
	}
	c.close()

	clk.advance(30 * time.Second)
	c2 := openTestCache(t, path, clk)
	if err := c2.add(tagOf("a"), client, clk.now().Add(-30*time.Second)); !errors.Is(err, errReplay) {
		t.Fatalf("replay after a restart: %v, want errReplay", err)
	}
	if err := c2.add(tagOf("b"), client, clk.now()); err != nil {
		t.Fatalf("a fresh authenticator after a restart: %v", err)
	}
}

// Entries expire with the skew: past it the file and memory forget them
// (the authenticator itself is past its time by then).
func TestReplayCacheExpires(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "rc")
	c := openTestCache(t, path, clk)
	old := clk.now()
	for i := range 10 {
		if err := c.add(tagOf(fmt.Sprint("old", i)), clientTag{1}, old); err != nil {
			t.Fatal(err)
		}
	}
	c.close()
	clk.advance(61 * time.Second)
	c = openTestCache(t, path, clk)
	if n := len(c.entries); n != 0 {
		t.Errorf("%d expired entries kept at open", n)
	}
	if recs := onDisk(t, path); len(recs) != 0 {
		t.Errorf("%d expired records kept in the file", len(recs))
	}
}

// A torn last record (a crash mid-write) is ignored; a file that is no
// replay cache is replaced, and then authenticators made before the
// start are refused, since the file may have held them.
func TestReplayCacheDamagedFile(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "rc")
	c := openTestCache(t, path, clk)
	if err := c.add(tagOf("a"), clientTag{1}, clk.now()); err != nil {
		t.Fatal(err)
	}
	c.close()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("torn record"))
	f.Close()
	c = openTestCache(t, path, clk)
	if c.damage != nil || !errors.Is(c.add(tagOf("a"), clientTag{1}, clk.now()), errReplay) {
		t.Fatalf("torn tail: damage %v; the record before it was lost", c.damage)
	}
	c.close()

	os.WriteFile(path, []byte("garbage, not a cache"), 0o600)
	clk.advance(time.Second)
	c = openTestCache(t, path, clk)
	if c.damage == nil || !strings.Contains(c.damage.Error(), "magic") {
		t.Fatalf("damage = %v, want the wrong magic named", c.damage)
	}
	if err := c.add(tagOf("a"), clientTag{1}, clk.now().Add(-time.Second)); err == nil || !strings.Contains(err.Error(), "predates this start") {
		t.Errorf("an authenticator older than the start, with the cache lost: %v", err)
	}
	if err := c.add(tagOf("c"), clientTag{1}, clk.now()); err != nil {
		t.Errorf("a fresh authenticator: %v", err)
	}
}

// Two processes cannot share the file: each would miss the other's.
func TestReplayCacheLocked(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "rc")
	openTestCache(t, path, clk)
	if _, err := openReplayCache(path, time.Minute, clk.now); err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second open: %v", err)
	}
}

// The cache is bounded in all and per client principal: past a bound an
// authenticator is refused (forgetting one would let it be replayed)
// and the others' go on; expired entries free their room.
func TestReplayCacheBounds(t *testing.T) {
	clk := newClock()
	c := openTestCache(t, filepath.Join(t.TempDir(), "rc"), clk)
	c.max, c.per = 5, 2
	flood, other := clientTag{1}, clientTag{2}
	for i := range 2 {
		if err := c.add(tagOf(fmt.Sprint("f", i)), flood, clk.now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.add(tagOf("f2"), flood, clk.now()); !errors.Is(err, errReplayFull) || !strings.Contains(err.Error(), "this principal made 2") {
		t.Errorf("over the per-client bound: %v", err)
	}
	for i := range 2 {
		if err := c.add(tagOf(fmt.Sprint("o", i)), other, clk.now()); err != nil {
			t.Errorf("another client while one floods: %v", err)
		}
	}
	if err := c.add(tagOf("x"), clientTag{3}, clk.now()); err != nil {
		t.Fatal(err)
	}
	if err := c.add(tagOf("y"), clientTag{4}, clk.now()); !errors.Is(err, errReplayFull) {
		t.Errorf("over the total bound: %v", err)
	}
	clk.advance(61 * time.Second)
	if err := c.add(tagOf("y"), clientTag{4}, clk.now()); err != nil {
		t.Errorf("after the entries expired: %v", err)
	}
}

// The file is rewritten once most of its records are of expired
// entries, so it stays near the size of what is live.
func TestReplayCacheCompacts(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "rc")
	c := openTestCache(t, path, clk)
	for i := range 1500 {
		if err := c.add(tagOf(fmt.Sprint(i)), clientTag{byte(i % 7)}, clk.now()); err != nil {
			t.Fatal(err)
		}
		clk.advance(500 * time.Millisecond) // 120 live at a time
	}
	if recs := onDisk(t, path); len(recs) > 2*130+1024 {
		t.Errorf("the file holds %d records for about 120 live entries", len(recs))
	}
	if !errors.Is(c.add(tagOf("1499"), clientTag{2}, clk.now()), errReplay) {
		t.Error("the last entry was lost in a rewrite")
	}
}

// Concurrent adds: distinct authenticators all pass (sharing fsyncs),
// one sent twice at once passes once.
func TestReplayCacheConcurrent(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), "rc")
	c := openTestCache(t, path, clk)
	var wg sync.WaitGroup
	var passed atomic.Int32
	for i := range 64 {
		wg.Go(func() {
			if err := c.add(tagOf(fmt.Sprint("d", i)), clientTag{byte(i)}, clk.now()); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if c.add(tagOf("same"), clientTag{9}, clk.now()) == nil {
				passed.Add(1)
			}
		})
	}
	wg.Wait()
	if passed.Load() != 1 {
		t.Errorf("one authenticator sent 64 times at once passed %d times", passed.Load())
	}
	if recs := onDisk(t, path); len(recs) != 65 {
		t.Errorf("the file holds %d records, want 65", len(recs))
	}
}
