// Package blockmap is what the cache knows about one cached file: the
// upstream version it holds, which pages of it are on disk, and a CRC32C
// per page to check them by. It is kept on disk next to the data (see
// format.go) and in memory while the file is in use.
//
// Pages make a small read cheap: a 32 KiB read of a cached 1 MiB block
// reads and checks a page or two, not the block (16× less disk and CRC
// work or more), as pgread checks each 4 KiB page it sends. Page presence
// makes a small miss cheap: a random reader fetches the pages it reads,
// not the block around them.
//
// Besides what is saved, a Map keeps in memory which pages passed their
// check since they were last written (checks.go) and, for some of those,
// the CRC32C of each 4 KiB of them (subs.go). A Map is not safe for
// concurrent use: the cache's entry lock guards it.
package blockmap

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Map is one cached file's block map.
type Map struct {
	blockSize int64
	size      int64
	mtime     time.Time // upstream's
	pageSize  int64     // bytes per CRC and per presence bit
	nblocks   int
	present   []uint64 // one bit per page
	crcs      []uint32 // per page

	// Validated is the last time the upstream confirmed size and mtime.
	Validated time.Time
	// LastAccess is when a client last read the file, for purging the
	// least recently used.
	LastAccess time.Time

	// checked has a bit per page that passed its CRC check since it was
	// last written (in memory only; see checks.go).
	checked []uint64
	// forgets counts the checks forgotten (Uncheck): a reader that copied
	// pages from the page cache as checked asks that none was meanwhile.
	forgets uint64
	// subs holds, per 64 pages, the CRC32Cs of their 4 KiB pieces kept
	// from their check (subs.go); in memory only, made at the first one
	// kept.
	subs []atomic.Pointer[subsChunk]
}

const (
	// CheckPage is the unit of integrity checks on disk and of fetches
	// for scattered reads. A cold small read waits for its pages to cross
	// the WAN, so what it costs is their bytes: a 32 KiB read at a random
	// offset fetches 64 KiB on average with 32 KiB pages (96 KiB with the
	// 64 KiB pages of versions 2 and 3, 1 MiB with whole blocks), and a
	// cold vector read of 32 KiB chunks was answered 3–4 % sooner than
	// with 64 KiB pages (docs/benchmarks.md). The CRCs of a 5 GB file take
	// 640 KB (its map, read when the file is first opened after start-up).
	CheckPage = 32 << 10
	// LegacyPage is the page of versions 2 and 3.
	LegacyPage = 64 << 10
)

// New is an empty map of the current version for a file of size bytes
// cached in blocks of blockSize.
func New(blockSize, size int64, mtime time.Time) *Map {
	return NewVersion(Version, blockSize, size, mtime)
}

// NewVersion is an empty map with the pages of version v, as an earlier
// release wrote them; it is saved in that version.
func NewVersion(v uint32, blockSize, size int64, mtime time.Time) *Map {
	ps := pageSizeOf(v, blockSize)
	pages := blocksOf(size, ps)
	return &Map{
		blockSize: blockSize,
		pageSize:  ps,
		size:      size,
		mtime:     mtime,
		nblocks:   blocksOf(size, blockSize),
		present:   make([]uint64, (pages+63)/64),
		crcs:      make([]uint32, pages),
	}
}

// pageSizeOf is the page of a map of version v.
func pageSizeOf(v uint32, blockSize int64) int64 {
	switch {
	case v == 1:
		return blockSize
	case v < 4:
		return min(LegacyPage, blockSize)
	}
	return min(CheckPage, blockSize)
}

func blocksOf(size, blockSize int64) int {
	return int((size + blockSize - 1) / blockSize)
}

// BlockSize is the file's unit of caching for sequential readers.
func (m *Map) BlockSize() int64 { return m.blockSize }

// PageSize is the bytes per CRC and presence bit: CheckPage, LegacyPage
// or the block (version 1).
func (m *Map) PageSize() int64 { return m.pageSize }

// Size is the upstream file's size.
func (m *Map) Size() int64 { return m.size }

// MTime is the upstream file's modification time.
func (m *Map) MTime() time.Time { return m.mtime }

// Blocks is how many blocks the file has.
func (m *Map) Blocks() int { return m.nblocks }

// Pages is how many pages the file has.
func (m *Map) Pages() int { return len(m.crcs) }

// PagesPerBlock is how many pages one (full) block has.
func (m *Map) PagesPerBlock() int { return int(m.blockSize / m.pageSize) }

// BlockPages is the range [first, end) of block b's pages (the last block
// may have fewer).
func (m *Map) BlockPages(b int) (int, int) {
	first := b * m.PagesPerBlock()
	return first, min(first+m.PagesPerBlock(), m.Pages())
}

// PageRange is the range [first, end) of the pages holding bytes
// [off, end) of the file (off < end).
func (m *Map) PageRange(off, end int64) (int, int) {
	return int(off / m.pageSize), int((end-1)/m.pageSize) + 1
}

// PageLen is the length of page p (the last one may be short).
func (m *Map) PageLen(p int) int64 {
	return min(m.pageSize, m.size-int64(p)*m.pageSize)
}

// Has reports whether page p is on disk.
func (m *Map) Has(p int) bool { return m.present[p/64]&(1<<(p%64)) != 0 }

// CRC is page p's CRC32C.
func (m *Map) CRC(p int) uint32 { return m.crcs[p] }

// CRCs is a copy of the CRCs of pages [p, q).
func (m *Map) CRCs(p, q int) []uint32 { return append([]uint32(nil), m.crcs[p:q]...) }

// SetPages marks the pages from first present with their CRCs.
func (m *Map) SetPages(first int, crcs []uint32) {
	for i := range crcs {
		p := first + i
		m.present[p/64] |= 1 << (p % 64)
		m.Uncheck(p)
	}
	copy(m.crcs[first:], crcs)
}

// Clear marks page p missing: its bytes were dropped.
func (m *Map) Clear(p int) {
	m.present[p/64] &^= 1 << (p % 64)
	m.Uncheck(p)
}

// Count is the number of blocks holding at least one page.
func (m *Map) Count() int {
	ppb := m.PagesPerBlock()
	if ppb == 1 {
		return m.presentPages()
	}
	n := 0
	if ppb >= 64 { // a block spans whole words
		wpb := ppb / 64
		for i := 0; i < len(m.present); i += wpb {
			for _, w := range m.present[i:min(i+wpb, len(m.present))] {
				if w != 0 {
					n++
					break
				}
			}
		}
		return n
	}
	mask := uint64(1)<<ppb - 1
	for _, w := range m.present {
		for ; w != 0; w >>= ppb {
			if w&mask != 0 {
				n++
			}
		}
	}
	return n
}

func (m *Map) presentPages() int {
	n := 0
	for _, w := range m.present {
		n += bits.OnesCount64(w)
	}
	return n
}

// CachedBytes is the data the present pages hold.
func (m *Map) CachedBytes() int64 {
	n := int64(m.presentPages()) * m.pageSize
	if last := m.Pages() - 1; last >= 0 && m.Has(last) {
		n -= int64(last+1)*m.pageSize - m.size
	}
	return n
}

// Complete reports whether every page is on disk.
func (m *Map) Complete() bool { return m.presentPages() == m.Pages() }

// Clone copies what is saved of m (not its checks: a snapshot to write).
func (m *Map) Clone() *Map {
	c := *m
	c.present = append([]uint64(nil), m.present...)
	c.crcs = append([]uint32(nil), m.crcs...)
	c.checked, c.subs = nil, nil
	return &c
}

// Forget is a map of the same file with no page present: the cached copy
// was dropped, and its pages must be fetched again.
func (m *Map) Forget() *Map {
	n := New(m.blockSize, m.size, m.mtime)
	n.Validated, n.LastAccess = m.Validated, m.LastAccess
	return n
}
