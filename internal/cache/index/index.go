// Package index holds what a cache must know about the cached files
// nobody is using — with a million of them, that is nearly all — in about 120 bytes
// each, where a full entry with its block map, mutexes and maps costs
// over 500: one record per file, no pointer to its block map (loaded from
// disk when the file is opened) and no lock of its own.
//
// The records are in two structures at once:
//   - a treap ordered by path (two child pointers in the record, the
//     priority a seeded hash of the path, so no crafted set of names can
//     unbalance it): lookups for Open and Stat, and `cache ls` pages that
//     start at a cursor and cost O(log n + page);
//   - a min-heap on last access (one pointer per file): the purge takes
//     the least recently used file in O(log n) without walking or
//     sorting them all each round.
//
// A file in use lives in the cache's table of entries instead (an entry
// with its block map), and goes back to the index once idle; a path is in
// one or the other, never both. The totals of the records are kept as
// they change, so usage is O(files in use).
//
// An Index is not safe for concurrent use: the cache's lock guards it.
package index

import (
	"container/heap"
	"hash/maphash"
	"strings"
)

// Index is the records of a cache's idle files.
type Index struct {
	seed  maphash.Seed
	root  *Record
	lru   lruHeap
	bytes int64 // cached bytes of the records
	// checked keeps the checked bits (blockmap.Map.CheckedBits) of the
	// idle files that had any, so a job opening one again copies the
	// pages still in the page cache rather than checking them again.
	// Beside the records, not in them: most of a million records never
	// have any.
	checked map[*Record][]uint64
}

// Record is one idle cached file. Times are Unix nanoseconds.
type Record struct {
	Path      string
	Size      int64 // the upstream file's
	Cached    int64 // bytes of its blocks on disk
	MTime     int64 // the upstream file's
	ATime     int64 // last access
	Validated int64 // last time the upstream confirmed size and mtime
	Present   int32 // blocks on disk

	heapAt      int32 // position in Index.lru
	left, right *Record
}

// New is an empty index.
func New() *Index { return &Index{seed: maphash.MakeSeed(), checked: map[*Record][]uint64{}} }

// Len is the number of records.
func (x *Index) Len() int { return len(x.lru) }

// Bytes is the cached bytes of the records.
func (x *Index) Bytes() int64 { return x.bytes }

// KeepChecked keeps the checked bits of r's pages while it is idle.
func (x *Index) KeepChecked(r *Record, bits []uint64) { x.checked[r] = bits }

// Checked are the checked bits kept for r, or nil.
func (x *Index) Checked(r *Record) []uint64 { return x.checked[r] }

// Get is the record of path p, or nil.
func (x *Index) Get(p string) *Record {
	t := x.root
	for t != nil {
		switch {
		case p < t.Path:
			t = t.left
		case p > t.Path:
			t = t.right
		default:
			return t
		}
	}
	return nil
}

// Add inserts r, replacing the record of the same path if there is one.
func (x *Index) Add(r *Record) {
	if old := x.Get(r.Path); old != nil {
		x.Remove(old)
	}
	r.left, r.right = nil, nil
	x.root = x.insert(x.root, r)
	heap.Push(&x.lru, r)
	x.bytes += r.Cached
}

// Remove removes r.
func (x *Index) Remove(r *Record) {
	delete(x.checked, r)
	x.root = x.delete(x.root, r.Path)
	heap.Remove(&x.lru, int(r.heapAt))
	x.bytes -= r.Cached
	r.left, r.right = nil, nil
}

// Oldest is the least recently used record, or nil.
func (x *Index) Oldest() *Record {
	if len(x.lru) == 0 {
		return nil
	}
	return x.lru[0]
}

func (x *Index) prio(r *Record) uint64 { return maphash.String(x.seed, r.Path) }

func (x *Index) insert(t, r *Record) *Record {
	if t == nil {
		return r
	}
	if r.Path < t.Path {
		t.left = x.insert(t.left, r)
		if x.prio(t.left) > x.prio(t) {
			l := t.left
			t.left, l.right = l.right, t
			return l
		}
		return t
	}
	t.right = x.insert(t.right, r)
	if x.prio(t.right) > x.prio(t) {
		rt := t.right
		t.right, rt.left = rt.left, t
		return rt
	}
	return t
}

func (x *Index) delete(t *Record, p string) *Record {
	switch {
	case t == nil:
		return nil
	case p < t.Path:
		t.left = x.delete(t.left, p)
	case p > t.Path:
		t.right = x.delete(t.right, p)
	default:
		return x.merge(t.left, t.right)
	}
	return t
}

// merge joins two treaps, every path of a before every path of b.
func (x *Index) merge(a, b *Record) *Record {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case x.prio(a) > x.prio(b):
		a.right = x.merge(a.right, b)
		return a
	}
	b.left = x.merge(a, b.left)
	return b
}

// ascend calls fn for the records with path >= from in order, until fn
// returns false. It costs the height of the tree plus the records seen.
func ascend(t *Record, from string, fn func(*Record) bool) bool {
	for t != nil {
		if t.Path < from {
			t = t.right // nothing on the left is >= from
			continue
		}
		if !ascend(t.left, from, fn) || !fn(t) {
			return false
		}
		// Everything on the right is > t.Path >= from.
		return ascendAll(t.right, fn)
	}
	return true
}

func ascendAll(t *Record, fn func(*Record) bool) bool {
	for t != nil {
		if !ascendAll(t.left, fn) || !fn(t) {
			return false
		}
		t = t.right
	}
	return true
}

// Below calls fn, in path order, for the records at or below prefix (a
// clean path) whose path is after `after` ("" for the start), until fn
// returns false. Paths beside the prefix ("/a-b" for "/a") are never
// visited, so a page costs its own records only.
func (x *Index) Below(prefix, after string, fn func(*Record) bool) {
	if prefix == "/" {
		ascend(x.root, after+"\x00", fn)
		return
	}
	if after < prefix {
		if r := x.Get(prefix); r != nil && !fn(r) {
			return
		}
	}
	dir := prefix + "/"
	from := max(dir, after+"\x00")
	ascend(x.root, from, func(r *Record) bool {
		return strings.HasPrefix(r.Path, dir) && fn(r)
	})
}

// lruHeap orders records by last access, oldest first.
type lruHeap []*Record

func (h lruHeap) Len() int           { return len(h) }
func (h lruHeap) Less(i, j int) bool { return h[i].ATime < h[j].ATime }
func (h lruHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapAt, h[j].heapAt = int32(i), int32(j)
}
func (h *lruHeap) Push(v any) {
	r := v.(*Record)
	r.heapAt = int32(len(*h))
	*h = append(*h, r)
}
func (h *lruHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapAt = -1
	return r
}
