package blockmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// On-disk form, little endian: magic "SBXC", version u32, block size u32,
// size i64, mtime ns i64, validated ns i64, last access ns i64, block
// count u32, presence bitmap (u64 words), one CRC32C (u32) per page, and
// a CRC32C of everything before it, so a torn or foreign file is rejected
// instead of trusted. A page is CheckPage bytes in version 4, 64 KiB in
// versions 2 and 3, the whole block in version 1 (maps written before
// pages existed; all are still read and kept in their version). The
// bitmap has a bit per page in versions 3 and 4, per block in versions 1
// and 2 (a block was fetched whole then).
const (
	magic = "SBXC"
	// Version is the version of maps made new.
	Version = 4
	// HeaderLen is the length of the header, before the bitmap.
	HeaderLen = 4 + 4 + 4 + 8*4 + 4
)

// ErrBad says the bytes are not a valid block map.
var ErrBad = errors.New("not a valid block map")

// Marshal is m's on-disk form, in the version its pages were made in.
func (m *Map) Marshal() []byte {
	b := make([]byte, 0, HeaderLen+8*len(m.present)+4*len(m.crcs)+4)
	b = append(b, magic...)
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
	le := binary.LittleEndian
	b = le.AppendUint32(b, v)
	b = le.AppendUint32(b, uint32(m.blockSize))
	b = le.AppendUint64(b, uint64(m.size))
	b = le.AppendUint64(b, uint64(m.mtime.UnixNano()))
	b = le.AppendUint64(b, uint64(m.Validated.UnixNano()))
	b = le.AppendUint64(b, uint64(m.LastAccess.UnixNano()))
	b = le.AppendUint32(b, uint32(m.nblocks))
	for _, w := range m.present {
		b = le.AppendUint64(b, w)
	}
	for _, c := range m.crcs {
		b = le.AppendUint32(b, c)
	}
	return le.AppendUint32(b, Checksum(b))
}

// Unmarshal reads a map in any version, or fails with ErrBad.
func Unmarshal(b []byte) (*Map, error) {
	if len(b) < HeaderLen+4 || string(b[:4]) != magic {
		return nil, ErrBad
	}
	le := binary.LittleEndian
	body, sum := b[:len(b)-4], le.Uint32(b[len(b)-4:])
	if Checksum(body) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (torn write?)", ErrBad)
	}
	v := le.Uint32(b[4:])
	if v < 1 || v > Version {
		return nil, fmt.Errorf("%w: version %d", ErrBad, v)
	}
	m := &Map{
		blockSize:  int64(le.Uint32(b[8:])),
		size:       int64(le.Uint64(b[12:])),
		mtime:      time.Unix(0, int64(le.Uint64(b[20:]))),
		Validated:  time.Unix(0, int64(le.Uint64(b[28:]))),
		LastAccess: time.Unix(0, int64(le.Uint64(b[36:]))),
	}
	n := int(le.Uint32(b[44:]))
	if m.blockSize <= 0 || m.size < 0 || n != blocksOf(m.size, m.blockSize) {
		return nil, fmt.Errorf("%w: inconsistent header", ErrBad)
	}
	m.nblocks, m.pageSize = n, pageSizeOf(v, m.blockSize)
	if m.blockSize%m.pageSize != 0 {
		return nil, fmt.Errorf("%w: block size %d", ErrBad, m.blockSize)
	}
	pages := blocksOf(m.size, m.pageSize)
	bitsOnDisk := pages // a bit per page
	if v == 2 {
		bitsOnDisk = n // a bit per block
	}
	words := (bitsOnDisk + 63) / 64
	if len(body) != HeaderLen+8*words+4*pages {
		return nil, fmt.Errorf("%w: length %d", ErrBad, len(b))
	}
	p := body[HeaderLen:]
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
			first, end := m.BlockPages(i)
			m.SetPages(first, m.crcs[first:end])
		} else {
			m.present[i/64] |= 1 << (i % 64)
		}
	}
	return m, nil
}
