package blockmap

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// set marks block b present with its pages' CRCs.
func (m *Map) set(b int, crcs []uint32) {
	first, _ := m.BlockPages(b)
	m.SetPages(first, crcs)
}

// has reports whether block b is present whole.
func (m *Map) has(b int) bool {
	first, end := m.BlockPages(b)
	for p := first; p < end; p++ {
		if !m.Has(p) {
			return false
		}
	}
	return true
}

// blockCRCs are the CRCs of block b's pages.
func (m *Map) blockCRCs(b int) []uint32 {
	first, end := m.BlockPages(b)
	return m.CRCs(first, end)
}

// TestBlockMapPages: a map keeps one CRC per page and survives a round
// trip in the version of its pages: a new map has CheckPage pages
// (version 4); a version 3 map (64 KiB pages) and a version 1 map (one
// CRC per block) still load, keep their CRCs and are saved in their
// version.
func TestBlockMapPages(t *testing.T) {
	mtime := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		name      string
		blockSize int64
		version   uint32
		wantPage  int64
	}{
		{"pages", 1 << 20, 4, CheckPage},
		{"block of two pages", 64 << 10, 4, CheckPage},
		{"block of one page", 32 << 10, 4, 32 << 10},
		{"version 3", 1 << 20, 3, LegacyPage},
		{"version 3, block of one page", 64 << 10, 3, LegacyPage},
		{"version 1", 1 << 20, 1, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewVersion(tc.version, tc.blockSize, 3*tc.blockSize+100, mtime)
			if m.PageSize() != tc.wantPage {
				t.Fatalf("page %d, want %d", m.PageSize(), tc.wantPage)
			}
			crcs := make([]uint32, len(m.blockCRCs(1)))
			for i := range crcs {
				crcs[i] = uint32(i + 7)
			}
			m.set(1, crcs)
			raw := m.Marshal()
			if v := binary.LittleEndian.Uint32(raw[4:]); v != tc.version {
				t.Errorf("saved as version %d, want %d", v, tc.version)
			}
			got, err := Unmarshal(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.PageSize() != tc.wantPage || !got.has(1) || got.has(0) || !slices.Equal(got.blockCRCs(1), crcs) {
				t.Errorf("got page %d, CRCs %v, want page %d, CRCs %v", got.PageSize(), got.blockCRCs(1), tc.wantPage, crcs)
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
	m := NewVersion(3, 1<<20, 3<<20+100, time.Unix(1700000000, 0))
	for i := range m.crcs {
		m.crcs[i] = uint32(i)
	}
	raw := m.Marshal()
	// Rewrite as version 2: the bitmap shrinks from 49 bits to 4 bits
	// (one word either way); block 1 present.
	le := binary.LittleEndian
	le.PutUint32(raw[4:], 2)
	le.PutUint64(raw[HeaderLen:], 1<<1)
	body := raw[:len(raw)-4]
	le.PutUint32(raw[len(raw)-4:], Checksum(body))
	got, err := Unmarshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !got.has(1) || got.has(0) || got.has(2) || got.Count() != 1 || got.CachedBytes() != 1<<20 {
		t.Fatalf("present pages %x, count %d, cached %d", got.present, got.Count(), got.CachedBytes())
	}
	if v := le.Uint32(got.Marshal()[4:]); v != 3 || got.PageSize() != LegacyPage {
		t.Fatalf("saved as version %d with pages of %d bytes, want version 3 and 64 KiB", v, got.PageSize())
	}
	got.SetPages(got.Pages()-1, []uint32{9})
	if got.Count() != 2 || got.CachedBytes() != 1<<20+100 || got.Complete() {
		t.Fatalf("with the tail page: count %d, cached %d", got.Count(), got.CachedBytes())
	}
}

// TestCRCCombine: CRCs of 4 KiB pieces combine into the CRC of the run,
// whatever the length of the last piece.
func TestCRCCombine(t *testing.T) {
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	for _, n := range []int{1, 100, SubPage, SubPage + 1, 5*SubPage + 77, 64 << 10} {
		subs := SubCRCs(nil, buf[:n])
		if got, want := Combine(subs, int64(n)), Checksum(buf[:n]); got != want {
			t.Errorf("%d bytes: combined %08x, want %08x", n, got, want)
		}
	}
}

// The kept CRCs are bounded across the cache: past the bound the oldest
// chunks are dropped, and a page's are forgotten with its check. A kept
// CRC that no longer combines to its page's is never handed out.
func TestKeptCRCsAreBounded(t *testing.T) {
	const size = 256 * CheckPage // 4 chunks
	m := New(1<<20, size, time.Time{})
	per := int(CheckPage / SubPage)
	subs := make([]uint32, m.Pages()*per)
	crcs := make([]uint32, m.Pages())
	for p := range crcs {
		for i := range per {
			subs[p*per+i] = rand.Uint32()
		}
		crcs[p] = Combine(subs[p*per:(p+1)*per], CheckPage)
	}
	m.SetPages(0, crcs)
	k := NewKeeper(2 * 64 * per * 4) // room for two chunks
	m.KeepSubs(k, 0, subs)
	dst := make([]uint32, per)
	for p, kept := range map[int]bool{0: false, 100: false, 128: true, 255: true} {
		off := int64(p) * CheckPage
		if got := m.SubsOf(dst, off, off+CheckPage); got != kept {
			t.Errorf("page %d: kept %v, want %v", p, got, kept)
		} else if got && !slices.Equal(dst, subs[p*per:(p+1)*per]) {
			t.Errorf("page %d: CRCs differ", p)
		}
	}
	m.Uncheck(200)
	if m.SubsOf(dst, 200*CheckPage, 201*CheckPage) {
		t.Error("CRCs of an unchecked page still kept")
	}
	if !m.SubsOf(dst, 201*CheckPage, 202*CheckPage) {
		t.Error("CRCs of the next page forgotten")
	}
	c := m.subs[202/64].Load()
	c.subs[202%64*per+3] ^= 1
	if m.SubsOf(dst, 202*CheckPage, 203*CheckPage) {
		t.Error("handed out a kept CRC that no longer combines to its page's")
	}
	if !m.SubsOf(dst, 203*CheckPage, 204*CheckPage) {
		t.Error("the next page's CRCs went with it")
	}
}
