package mount

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"sitebox/internal/store"
)

func infos(names ...string) []store.FileInfo {
	var out []store.FileInfo
	for _, n := range names {
		out = append(out, store.FileInfo{Name: n, Size: int64(len(n))})
	}
	return out
}

// A listing answers for its names, per credential: what A listed is not
// B's to see.
func TestDirCachePerCredential(t *testing.T) {
	c := newDirCache(time.Hour, 100)
	c.putListing("A", "/d", infos("x", "y"))
	l := c.listing("A", "/d")
	if l == nil || len(l.names) != 2 || l.entries["y"].Size != 1 {
		t.Fatalf("A's listing: %+v", l)
	}
	if c.listing("B", "/d") != nil {
		t.Error("B was given the listing A made")
	}
	c.putStat("B", "/d/z", store.FileInfo{}, store.ErrNotFound)
	if s := c.stat("B", "/d/z"); s == nil || !errors.Is(s.err, store.ErrNotFound) {
		t.Errorf("B's \"no such file\" is not kept: %+v", s)
	}
	if c.stat("A", "/d/z") != nil {
		t.Error("A was given B's stat")
	}
}

// A change through the mount drops every credential's record of the
// paths it touched.
func TestDirCacheInvalidate(t *testing.T) {
	c := newDirCache(time.Hour, 100)
	c.putListing("A", "/d", infos("x"))
	c.putListing("B", "/d", infos("x"))
	c.putListing("A", "/e", infos("x"))
	c.putStat("A", "/d/x", store.FileInfo{Name: "x"}, nil)
	c.invalidate("/d", "/d/x")
	if c.listing("A", "/d") != nil || c.listing("B", "/d") != nil || c.stat("A", "/d/x") != nil {
		t.Error("records of /d survived its invalidation")
	}
	if c.listing("A", "/e") == nil {
		t.Error("/e was dropped with /d")
	}
	if got := c.held(); got != 2 {
		t.Errorf("%d names held after the drop, want 2 (/e and its entry)", got)
	}
}

// Records expire after the TTL; none are kept with a TTL of zero.
func TestDirCacheTTL(t *testing.T) {
	c := newDirCache(time.Nanosecond, 100)
	c.putListing("A", "/d", infos("x"))
	time.Sleep(time.Millisecond)
	if c.listing("A", "/d") != nil {
		t.Error("an expired listing was served")
	}
	if c.held() != 0 {
		t.Errorf("an expired listing still holds %d names", c.held())
	}
	z := newDirCache(0, 100)
	z.putListing("A", "/d", infos("x"))
	if z.listing("A", "/d") != nil {
		t.Error("a listing was kept with a TTL of zero")
	}
}

// Memory is bounded: past the cap of names, the least recently used
// listings go first.
func TestDirCacheLRU(t *testing.T) {
	c := newDirCache(time.Hour, 10)
	for i := range 3 {
		c.putListing("A", fmt.Sprintf("/d%d", i), infos("a", "b", "c")) // 4 names each
	}
	if c.held() > 10 {
		t.Fatalf("%d names held, cap 10", c.held())
	}
	if c.listing("A", "/d0") != nil {
		t.Error("the oldest listing survived past the cap")
	}
	if c.listing("A", "/d2") == nil {
		t.Error("the newest listing was dropped")
	}
	c.listing("A", "/d1") // now the most recent
	c.putListing("A", "/d3", infos("a", "b", "c"))
	if c.listing("A", "/d1") == nil || c.listing("A", "/d2") != nil {
		t.Error("eviction did not follow use")
	}
}
