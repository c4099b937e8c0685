package cache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"time"
)

// blockMap is what the cache knows about one file: the upstream version it
// holds, which blocks are on disk and their CRC32C. It is kept on disk next
// to the data (the meta tree mirrors the data tree).
//
// On-disk form, little endian: magic "SBXC", version u32, block size u32,
// size i64, mtime ns i64, validated ns i64, last access ns i64, block
// count u32, presence bitmap (u64 words), one CRC32C (u32) per page, and
// a CRC32C of everything before it, so a torn or foreign file is rejected
// instead of trusted. A page is checkPage bytes in version 2, the whole
// block in version 1 (maps written before pages existed, still read).
//
// Pages make a small read cheap: a 32 KiB read of a cached 1 MiB block
// reads and checks one 64 KiB page, not the block (32× less disk and CRC
// work), as pgread checks each 4 KiB page it sends.
type blockMap struct {
	blockSize  int64
	size       int64
	mtime      time.Time // upstream's
	validated  time.Time // last time the upstream confirmed size and mtime
	lastAccess time.Time
	pageSize   int64 // bytes per CRC: checkPage, or blockSize (version 1)
	nblocks    int
	present    []uint64
	crcs       []uint32 // per page
}

const (
	cinfoMagic   = "SBXC"
	cinfoVersion = 2
	cinfoHeader  = 4 + 4 + 4 + 8*4 + 4
	// checkPage is the unit of integrity checks on disk: 64 KiB makes
	// ROOT's typical 10–100 KiB basket reads touch one or two pages,
	// while the CRCs of a 5 GB file stay at 320 KB (its map, read when
	// the file is first opened after start-up).
	checkPage = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newBlockMap(blockSize, size int64, mtime time.Time) *blockMap {
	n := blocksOf(size, blockSize)
	ps := min(int64(checkPage), blockSize)
	return &blockMap{
		blockSize: blockSize,
		pageSize:  ps,
		size:      size,
		mtime:     mtime,
		nblocks:   n,
		present:   make([]uint64, (n+63)/64),
		crcs:      make([]uint32, blocksOf(size, ps)),
	}
}

func blocksOf(size, blockSize int64) int {
	return int((size + blockSize - 1) / blockSize)
}

func (m *blockMap) blocks() int { return m.nblocks }

// pagesPerBlock is how many CRCs one (full) block has.
func (m *blockMap) pagesPerBlock() int { return int(m.blockSize / m.pageSize) }

// blockCRCs are the CRCs of block b's pages (the last block may have
// fewer). The slice aliases the map: copy it before releasing the lock.
func (m *blockMap) blockCRCs(b int) []uint32 {
	first := b * m.pagesPerBlock()
	return m.crcs[first:min(first+m.pagesPerBlock(), len(m.crcs))]
}

func (m *blockMap) has(b int) bool { return m.present[b/64]&(1<<(b%64)) != 0 }

// set marks block b present with its pages' CRCs.
func (m *blockMap) set(b int, crcs []uint32) {
	m.present[b/64] |= 1 << (b % 64)
	copy(m.blockCRCs(b), crcs)
}

func (m *blockMap) clear(b int) { m.present[b/64] &^= 1 << (b % 64) }

// blockLen is the length of block b (the last one may be short).
func (m *blockMap) blockLen(b int) int64 {
	return min(m.blockSize, m.size-int64(b)*m.blockSize)
}

func (m *blockMap) count() int {
	n := 0
	for _, w := range m.present {
		n += bits.OnesCount64(w)
	}
	return n
}

// cachedBytes is the data the present blocks hold.
func (m *blockMap) cachedBytes() int64 {
	n := int64(m.count()) * m.blockSize
	if last := m.blocks() - 1; last >= 0 && m.has(last) {
		n -= m.blockSize - m.blockLen(last)
	}
	return n
}

func (m *blockMap) complete() bool { return m.count() == m.blocks() }

func (m *blockMap) clone() *blockMap {
	c := *m
	c.present = append([]uint64(nil), m.present...)
	c.crcs = append([]uint32(nil), m.crcs...)
	return &c
}

func (m *blockMap) marshal() []byte {
	n := m.blocks()
	b := make([]byte, 0, cinfoHeader+8*len(m.present)+4*len(m.crcs)+4)
	b = append(b, cinfoMagic...)
	v := uint32(cinfoVersion)
	if m.pageSize != checkPage {
		v = 1 // a map of version 1 keeps its per-block CRCs
	}
	b = binary.LittleEndian.AppendUint32(b, v)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.blockSize))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.mtime.UnixNano()))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.validated.UnixNano()))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.lastAccess.UnixNano()))
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
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
	if v != 1 && v != cinfoVersion {
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
	m.nblocks, m.pageSize = n, m.blockSize
	if v == cinfoVersion {
		m.pageSize = min(checkPage, m.blockSize)
	}
	if m.blockSize%m.pageSize != 0 {
		return nil, fmt.Errorf("%w: block size %d", errBadMap, m.blockSize)
	}
	pages := blocksOf(m.size, m.pageSize)
	words := (n + 63) / 64
	if len(body) != cinfoHeader+8*words+4*pages {
		return nil, fmt.Errorf("%w: length %d", errBadMap, len(b))
	}
	p := body[cinfoHeader:]
	m.present = make([]uint64, words)
	for i := range m.present {
		m.present[i] = le.Uint64(p[8*i:])
	}
	p = p[8*words:]
	m.crcs = make([]uint32, pages)
	for i := range m.crcs {
		m.crcs[i] = le.Uint32(p[4*i:])
	}
	return m, nil
}
