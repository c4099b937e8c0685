package cache

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"
	"time"
)

// TestBlockMapPages: a map keeps one CRC per page and survives a round
// trip in the version of its pages: a new map has checkPage pages
// (version 4); a version 3 map (64 KiB pages) and a version 1 map (one
// CRC per block) still load, keep their CRCs and are saved in their
// version.
func TestBlockMapPages(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		name      string
		blockSize int64
		page      int64 // the map's page; 0: a new map's
		version   uint32
	}{
		{"pages", 1 << 20, 0, 4},
		{"block of two pages", 64 << 10, 0, 4},
		{"block of one page", 32 << 10, 0, 4},
		{"version 3", 1 << 20, legacyPage, 3},
		{"version 3, block of one page", 64 << 10, legacyPage, 3},
		{"version 1", 1 << 20, 1 << 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newBlockMap(tc.blockSize, 3*tc.blockSize+100, mtime)
			if tc.page != 0 {
				m.pageSize = tc.page
				m.crcs = make([]uint32, blocksOf(m.size, tc.page))
				m.present = make([]uint64, (len(m.crcs)+63)/64)
			}
			wantPage := m.pageSize
			crcs := make([]uint32, len(m.blockCRCs(1)))
			for i := range crcs {
				crcs[i] = uint32(i + 7)
			}
			m.set(1, crcs)
			raw := m.marshal()
			if v := binary.LittleEndian.Uint32(raw[4:]); v != tc.version {
				t.Errorf("saved as version %d, want %d", v, tc.version)
			}
			got, err := unmarshalBlockMap(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.pageSize != wantPage || !got.has(1) || got.has(0) || !slices.Equal(got.blockCRCs(1), crcs) {
				t.Errorf("got page %d, CRCs %v, want page %d, CRCs %v", got.pageSize, got.blockCRCs(1), wantPage, crcs)
			}
			if last := got.blockCRCs(3); len(last) != 1 {
				t.Errorf("last block (100 bytes) has %d CRCs, want 1", len(last))
			}
		})
	}
}

// TestBlockMapVersion2: a version 2 map (64 KiB pages, a presence bit
// per block) loads with every page of its present blocks present, and is
// saved as version 3 (the same pages, a bit per page).
func TestBlockMapVersion2(t *testing.T) {
	m := newBlockMap(1<<20, 3<<20+100, time.Unix(1700000000, 0))
	m.pageSize = legacyPage
	m.crcs = make([]uint32, blocksOf(m.size, legacyPage))
	m.present = make([]uint64, (len(m.crcs)+63)/64)
	for i := range m.crcs {
		m.crcs[i] = uint32(i)
	}
	raw := m.marshal()
	// Rewrite as version 2: the bitmap shrinks from 49 bits to 4 bits
	// (one word either way); block 1 present.
	le := binary.LittleEndian
	le.PutUint32(raw[4:], 2)
	le.PutUint64(raw[cinfoHeader:], 1<<1)
	body := raw[:len(raw)-4]
	le.PutUint32(raw[len(raw)-4:], crc32.Checksum(body, castagnoli))
	got, err := unmarshalBlockMap(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !got.has(1) || got.has(0) || got.has(2) || got.count() != 1 || got.cachedBytes() != 1<<20 {
		t.Fatalf("present pages %x, count %d, cached %d", got.present, got.count(), got.cachedBytes())
	}
	if v := le.Uint32(got.marshal()[4:]); v != 3 || got.pageSize != legacyPage {
		t.Fatalf("saved as version %d with pages of %d bytes, want version 3 and 64 KiB", v, got.pageSize)
	}
	got.setPages(got.pages()-1, []uint32{9})
	if got.count() != 2 || got.cachedBytes() != 1<<20+100 || got.complete() {
		t.Fatalf("with the tail page: count %d, cached %d", got.count(), got.cachedBytes())
	}
}

// TestCRCCombine: CRCs of 4 KiB pages combine into the CRC of the run,
// whatever the length of the last piece.
func TestCRCCombine(t *testing.T) {
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	for _, n := range []int{1, 100, pgPage, pgPage + 1, 5*pgPage + 77, 64 << 10} {
		subs := subPageCRCs(nil, buf[:n])
		if got, want := combinePages(subs, int64(n)), crc32.Checksum(buf[:n], castagnoli); got != want {
			t.Errorf("%d bytes: combined %08x, want %08x", n, got, want)
		}
	}
}
