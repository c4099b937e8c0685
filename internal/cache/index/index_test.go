package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sitebox/internal/store"
)

// The index against a sorted slice: random adds, replacements and
// removals keep lookups, path order, prefix pages and the access order
// right.
func TestIndexMatchesReference(t *testing.T) {
	x := New()
	ref := map[string]*Record{}
	rng := rand.New(rand.NewPCG(1, 2))
	name := func() string {
		return fmt.Sprintf("/s/d%d/f%03d", rng.IntN(5), rng.IntN(300))
	}
	for i := range 20000 {
		p := name()
		switch rng.IntN(3) {
		case 0, 1:
			r := &Record{Path: p, Cached: int64(rng.IntN(1000)), ATime: rng.Int64N(1 << 40)}
			x.Add(r)
			ref[p] = r
		case 2:
			if r := x.Get(p); r != nil {
				x.Remove(r)
				delete(ref, p)
			} else if ref[p] != nil {
				t.Fatalf("step %d: %s missing", i, p)
			}
		}
	}
	var want []string
	var bytes int64
	for p, r := range ref {
		want = append(want, p)
		bytes += r.Cached
	}
	slices.Sort(want)
	if x.Len() != len(ref) || x.Bytes() != bytes {
		t.Fatalf("len %d bytes %d, want %d %d", x.Len(), x.bytes, len(ref), bytes)
	}
	var got []string
	x.Below("/", "", func(r *Record) bool { got = append(got, r.Path); return true })
	if !slices.Equal(got, want) {
		t.Fatalf("order differs: %d paths, want %d", len(got), len(want))
	}
	// Pages of 7 below /s/d2, resumed at the last path, give the same.
	var paged, below []string
	for _, p := range want {
		if store.HasPrefix(p, "/s/d2") {
			below = append(below, p)
		}
	}
	for after := ""; ; {
		var page []string
		x.Below("/s/d2", after, func(r *Record) bool { page = append(page, r.Path); return len(page) < 7 })
		paged = append(paged, page...)
		if len(page) < 7 {
			break
		}
		after = page[len(page)-1]
	}
	if !slices.Equal(paged, below) {
		t.Fatalf("pages %v, want %v", paged, below)
	}
	// Oldest first.
	last := int64(-1)
	for r := x.Oldest(); r != nil; r = x.Oldest() {
		if r.ATime < last {
			t.Fatalf("access order broken: %d after %d", r.ATime, last)
		}
		last = r.ATime
		x.Remove(r)
	}
	if x.root != nil || x.Bytes() != 0 {
		t.Fatal("index not empty after removing all")
	}
}

// A prefix page never visits the paths beside it ("/a-b" next to "/a").
func TestIndexBelowSkipsNeighbours(t *testing.T) {
	x := New()
	for _, p := range []string{"/a", "/a-b", "/a.txt", "/a/x", "/a/y", "/ab", "/b"} {
		x.Add(&Record{Path: p})
	}
	var seen []string
	x.Below("/a", "", func(r *Record) bool { seen = append(seen, r.Path); return true })
	if want := []string{"/a", "/a/x", "/a/y"}; !slices.Equal(seen, want) {
		t.Fatalf("below /a: %v, want %v", seen, want)
	}
	seen = nil
	x.Below("/a", "/a/x", func(r *Record) bool { seen = append(seen, r.Path); return true })
	if want := []string{"/a/y"}; !slices.Equal(seen, want) {
		t.Fatalf("below /a after /a/x: %v, want %v", seen, want)
	}
}
