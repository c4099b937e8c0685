package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"sync/atomic"
	"time"
)

// blockMap is what the cache knows about one file: the upstream version it
// holds, which pages are on disk and their CRC32C. It is kept on disk next
// to the data (the meta tree mirrors the data tree).
//
// On-disk form, little endian: magic "SBXC", version u32, block size u32,
// size i64, mtime ns i64, validated ns i64, last access ns i64, block
// count u32, presence bitmap (u64 words), one CRC32C (u32) per page, and
// a CRC32C of everything before it, so a torn or foreign file is rejected
// instead of trusted. A page is checkPage bytes in version 4, 64 KiB in
// versions 2 and 3, the whole block in version 1 (maps written before
// pages existed; all are still read and kept in their version). The
// bitmap has a bit per page in versions 3 and 4, per block in versions 1
// and 2 (a block was fetched whole then).
//
// Pages make a small read cheap: a 32 KiB read of a cached 1 MiB block
// reads and checks a page or two, not the block (16× less disk and CRC
// work or more), as pgread checks each 4 KiB page it sends. Page presence
// makes a small miss cheap: a random reader fetches the pages it reads,
// not the block around them (see File.ReadAt).
type blockMap struct {
	blockSize  int64
	size       int64
	mtime      time.Time // upstream's
	validated  time.Time // last time the upstream confirmed size and mtime
	lastAccess time.Time
	pageSize   int64 // bytes per CRC and per presence bit: checkPage, or blockSize (version 1)
	nblocks    int
	present    []uint64 // one bit per page
	crcs       []uint32 // per page
	// checked has a bit per page that passed its CRC check since it was
	// last written (in memory only; see checked.go).
	checked []uint64
	// forgets counts the checks forgotten (uncheck): a reader that copied
	// pages from the page cache as checked asks that none was meanwhile.
	forgets uint64
	// pgSubs holds, per 64 pages, the CRC32Cs of their pgPages kept from
	// their check for pgread (pgsubs.go); in memory only, made at the
	// first one kept.
	pgSubs []atomic.Pointer[subsChunk]
}

const (
	cinfoMagic   = "SBXC"
	cinfoVersion = 4
	cinfoHeader  = 4 + 4 + 4 + 8*4 + 4
	// checkPage is the unit of integrity checks on disk and of fetches
	// for scattered reads. A cold small read waits for its pages to cross
	// the WAN, so what it costs is their bytes: a 32 KiB read at a random
	// offset fetches 64 KiB on average with 32 KiB pages (96 KiB with the
	// 64 KiB pages of versions 2 and 3, 1 MiB with whole blocks), and a
	// cold vector read of 32 KiB chunks was answered 3–4 % sooner than
	// with 64 KiB pages (docs/benchmarks.md). The CRCs of a 5 GB file take
	// 640 KB (its map, read when the file is first opened after start-up).
	checkPage = 32 << 10
	// legacyPage is the page of versions 2 and 3.
	legacyPage = 64 << 10
)

// pageSizeOf is the page of a map of version v.
func pageSizeOf(v uint32, blockSize int64) int64 {
	switch {
	case v == 1:
		return blockSize
	case v < 4:
		return min(legacyPage, blockSize)
	}
	return min(checkPage, blockSize)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newBlockMap(blockSize, size int64, mtime time.Time) *blockMap {
	n := blocksOf(size, blockSize)
	ps := pageSizeOf(cinfoVersion, blockSize)
	pages := blocksOf(size, ps)
	return &blockMap{
		blockSize: blockSize,
		pageSize:  ps,
		size:      size,
		mtime:     mtime,
		nblocks:   n,
		present:   make([]uint64, (pages+63)/64),
		crcs:      make([]uint32, pages),
	}
}

func blocksOf(size, blockSize int64) int {
	return int((size + blockSize - 1) / blockSize)
}

func (m *blockMap) blocks() int { return m.nblocks }

// pages is how many pages the file has.
func (m *blockMap) pages() int { return len(m.crcs) }

// pagesPerBlock is how many pages one (full) block has.
func (m *blockMap) pagesPerBlock() int { return int(m.blockSize / m.pageSize) }

// blockPages is the range [first, end) of block b's pages (the last block
// may have fewer).
func (m *blockMap) blockPages(b int) (int, int) {
	first := b * m.pagesPerBlock()
	return first, min(first+m.pagesPerBlock(), m.pages())
}

// blockCRCs are the CRCs of block b's pages. The slice aliases the map:
// copy it before releasing the lock.
func (m *blockMap) blockCRCs(b int) []uint32 {
	first, end := m.blockPages(b)
	return m.crcs[first:end]
}

func (m *blockMap) hasPage(p int) bool { return m.present[p/64]&(1<<(p%64)) != 0 }

// has reports whether block b is present whole.
func (m *blockMap) has(b int) bool {
	first, end := m.blockPages(b)
	for p := first; p < end; p++ {
		if !m.hasPage(p) {
			return false
		}
	}
	return true
}

// setPages marks the pages from first present with their CRCs.
func (m *blockMap) setPages(first int, crcs []uint32) {
	for i := range crcs {
		p := first + i
		m.present[p/64] |= 1 << (p % 64)
		m.uncheck(p)
	}
	copy(m.crcs[first:], crcs)
}

// set marks block b present with its pages' CRCs.
func (m *blockMap) set(b int, crcs []uint32) {
	first, _ := m.blockPages(b)
	m.setPages(first, crcs)
}

func (m *blockMap) clearPage(p int) {
	m.present[p/64] &^= 1 << (p % 64)
	m.uncheck(p)
}

// pageLen is the length of page p (the last one may be short).
func (m *blockMap) pageLen(p int) int64 {
	return min(m.pageSize, m.size-int64(p)*m.pageSize)
}

// blockLen is the length of block b (the last one may be short).
func (m *blockMap) blockLen(b int) int64 {
	return min(m.blockSize, m.size-int64(b)*m.blockSize)
}

// count is the number of blocks holding at least one page.
func (m *blockMap) count() int {
	ppb := m.pagesPerBlock()
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

func (m *blockMap) presentPages() int {
	n := 0
	for _, w := range m.present {
		n += bits.OnesCount64(w)
	}
	return n
}

// cachedBytes is the data the present pages hold.
func (m *blockMap) cachedBytes() int64 {
	n := int64(m.presentPages()) * m.pageSize
	if last := m.pages() - 1; last >= 0 && m.hasPage(last) {
		n -= int64(last+1)*m.pageSize - m.size
	}
	return n
}

func (m *blockMap) complete() bool { return m.presentPages() == m.pages() }

func (m *blockMap) clone() *blockMap {
	c := *m
	c.present = append([]uint64(nil), m.present...)
	c.crcs = append([]uint32(nil), m.crcs...)
	c.checked = nil
	return &c
}

func (m *blockMap) marshal() []byte {
	b := make([]byte, 0, cinfoHeader+8*len(m.present)+4*len(m.crcs)+4)
	b = append(b, cinfoMagic...)
	// A map keeps the version its pages were fetched in: its CRCs are of
	// pages of that size. Version 1's pages are blocks, so its bitmap is
	// the same as version 3's would be.
	var v uint32
	switch m.pageSize {
	case pageSizeOf(4, m.blockSize):
		v = 4
	case pageSizeOf(3, m.blockSize):
		v = 3
	default:
		v = 1
	}
	b = binary.LittleEndian.AppendUint32(b, v)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.blockSize))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.mtime.UnixNano()))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.validated.UnixNano()))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.lastAccess.UnixNano()))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.nblocks))
	for _, w := range m.present {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	for _, c := range m.crcs {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var errBadMap = errors.New("not a valid block map")

func unmarshalBlockMap(b []byte) (*blockMap, error) {
	if len(b) < cinfoHeader+4 || string(b[:4]) != cinfoMagic {
		return nil, errBadMap
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (torn write?)", errBadMap)
	}
	le := binary.LittleEndian
	v := le.Uint32(b[4:])
	if v < 1 || v > cinfoVersion {
		return nil, fmt.Errorf("%w: version %d", errBadMap, v)
	}
	m := &blockMap{
		blockSize:  int64(le.Uint32(b[8:])),
		size:       int64(le.Uint64(b[12:])),
		mtime:      time.Unix(0, int64(le.Uint64(b[20:]))),
		validated:  time.Unix(0, int64(le.Uint64(b[28:]))),
		lastAccess: time.Unix(0, int64(le.Uint64(b[36:]))),
	}
	n := int(le.Uint32(b[44:]))
	if m.blockSize <= 0 || m.size < 0 || n != blocksOf(m.size, m.blockSize) {
		return nil, fmt.Errorf("%w: inconsistent header", errBadMap)
	}
	m.nblocks, m.pageSize = n, pageSizeOf(v, m.blockSize)
	if m.blockSize%m.pageSize != 0 {
		return nil, fmt.Errorf("%w: block size %d", errBadMap, m.blockSize)
	}
	pages := blocksOf(m.size, m.pageSize)
	bitsOnDisk := pages // a bit per page
	if v == 2 {
		bitsOnDisk = n // a bit per block
	}
	words := (bitsOnDisk + 63) / 64
	if len(body) != cinfoHeader+8*words+4*pages {
		return nil, fmt.Errorf("%w: length %d", errBadMap, len(b))
	}
	p := body[cinfoHeader:]
	m.present = make([]uint64, (pages+63)/64)
	m.crcs = make([]uint32, pages)
	for i := range m.crcs {
		m.crcs[i] = le.Uint32(p[8*words+4*i:])
	}
	for i := 0; i < bitsOnDisk; i++ {
		if le.Uint64(p[8*(i/64):])&(1<<(i%64)) == 0 {
			continue
		}
		if v == 2 {
			first, end := m.blockPages(i)
			m.setPages(first, m.crcs[first:end])
		} else {
			m.present[i/64] |= 1 << (i % 64)
		}
	}
	return m, nil
}
