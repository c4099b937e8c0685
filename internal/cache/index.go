package cache

import (
	"container/heap"
	"hash/maphash"
	"strings"
	"time"

	"sitebox/internal/cache/blockmap"
)

// index holds what the cache must know about the cached files nobody is
// using — with a million of them, that is nearly all — in about 120 bytes
// each, where a full entry with its block map, mutexes and maps costs
// over 500: one record per file, no pointer to its block map (loaded from
// disk when the file is opened, see loadEntryMap) and no lock of its own.
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
// A file in use lives in Cache.entries instead (an entry with its block
// map), and goes back to the index once idle (see forgetLocked); a path
// is in one or the other, never both. The totals of the records are kept
// as they change, so usage is O(files in use).
//
// Not safe for concurrent use: Cache.mu guards it.
type index struct {
	seed  maphash.Seed
	root  *rec
	lru   lruHeap
	bytes int64 // cached bytes of the records
	// checked keeps the checked bits (checked.go) of the idle files that
	// had any, so a job opening one again copies the pages still in the
	// page cache rather than checking them again. Beside the records,
	// not in them: most of a million records never have any.
	checked map[*rec][]uint64
}

// rec is one idle cached file. Times are Unix nanoseconds.
type rec struct {
	path        string
	size        int64 // the upstream file's
	cached      int64 // bytes of its blocks on disk
	mtime       int64 // the upstream file's
	atime       int64 // last access
	validated   int64 // last time the upstream confirmed size and mtime
	present     int32 // blocks on disk
	heapAt      int32 // position in index.lru
	left, right *rec
}

func newIndex() index { return index{seed: maphash.MakeSeed(), checked: map[*rec][]uint64{}} }

// recOf summarises the block map m of path p.
func recOf(p string, m *blockmap.Map) *rec {
	return &rec{
		path: p, size: m.Size(), cached: m.CachedBytes(), present: int32(m.Count()),
		mtime: m.MTime().UnixNano(), atime: m.LastAccess.UnixNano(), validated: m.Validated.UnixNano(),
	}
}

func (r *rec) info(blockSize int64) EntryInfo {
	return EntryInfo{
		Path: r.path, Size: r.size, CachedBytes: r.cached,
		Blocks: int((r.size + blockSize - 1) / blockSize), Present: int(r.present),
		ModTime: time.Unix(0, r.mtime), LastAccess: time.Unix(0, r.atime),
	}
}

func (x *index) len() int { return len(x.lru) }

func (x *index) get(p string) *rec {
	t := x.root
	for t != nil {
		switch {
		case p < t.path:
			t = t.left
		case p > t.path:
			t = t.right
		default:
			return t
		}
	}
	return nil
}

// add inserts r, replacing the record of the same path if there is one.
func (x *index) add(r *rec) {
	if old := x.get(r.path); old != nil {
		x.remove(old)
	}
	r.left, r.right = nil, nil
	x.root = x.insert(x.root, r)
	heap.Push(&x.lru, r)
	x.bytes += r.cached
}

func (x *index) remove(r *rec) {
	delete(x.checked, r)
	x.root = x.delete(x.root, r.path)
	heap.Remove(&x.lru, int(r.heapAt))
	x.bytes -= r.cached
	r.left, r.right = nil, nil
}

// oldest is the least recently used record, or nil.
func (x *index) oldest() *rec {
	if len(x.lru) == 0 {
		return nil
	}
	return x.lru[0]
}

func (x *index) prio(r *rec) uint64 { return maphash.String(x.seed, r.path) }

func (x *index) insert(t, r *rec) *rec {
	if t == nil {
		return r
	}
	if r.path < t.path {
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

func (x *index) delete(t *rec, p string) *rec {
	switch {
	case t == nil:
		return nil
	case p < t.path:
		t.left = x.delete(t.left, p)
	case p > t.path:
		t.right = x.delete(t.right, p)
	default:
		return x.merge(t.left, t.right)
	}
	return t
}

// merge joins two treaps, every path of a before every path of b.
func (x *index) merge(a, b *rec) *rec {
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
func ascend(t *rec, from string, fn func(*rec) bool) bool {
	for t != nil {
		if t.path < from {
			t = t.right // nothing on the left is >= from
			continue
		}
		if !ascend(t.left, from, fn) || !fn(t) {
			return false
		}
		// Everything on the right is > t.path >= from.
		return ascendAll(t.right, fn)
	}
	return true
}

func ascendAll(t *rec, fn func(*rec) bool) bool {
	for t != nil {
		if !ascendAll(t.left, fn) || !fn(t) {
			return false
		}
		t = t.right
	}
	return true
}

// below calls fn, in path order, for the records at or below prefix (a
// clean path) whose path is after `after` ("" for the start), until fn
// returns false. Paths beside the prefix ("/a-b" for "/a") are never
// visited, so a page costs its own records only.
func (x *index) below(prefix, after string, fn func(*rec) bool) {
	if prefix == "/" {
		ascend(x.root, after+"\x00", fn)
		return
	}
	if after < prefix {
		if r := x.get(prefix); r != nil && !fn(r) {
			return
		}
	}
	dir := prefix + "/"
	from := max(dir, after+"\x00")
	ascend(x.root, from, func(r *rec) bool {
		return strings.HasPrefix(r.path, dir) && fn(r)
	})
}

// lruHeap orders records by last access, oldest first.
type lruHeap []*rec

func (h lruHeap) Len() int           { return len(h) }
func (h lruHeap) Less(i, j int) bool { return h[i].atime < h[j].atime }
func (h lruHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapAt, h[j].heapAt = int32(i), int32(j)
}
func (h *lruHeap) Push(v any) {
	r := v.(*rec)
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
