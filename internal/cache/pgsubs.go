package cache

import (
	"sync"
	"sync/atomic"
)

// Keeping the pgread CRCs of checked pages. A pgread sends a CRC32C per
// 4 KiB, which checking a page computes on the way (checkPages, and
// fetched for what comes from upstream). Kept beside the page's checked
// bit, they let a pgread of checked pages still in the page cache lend
// the bytes to its writev as a vector read does (File.ViewPages), where
// it otherwise read the pages into a buffer and computed the CRCs again:
// one copy and one pass over the bytes fewer. They are forgotten with
// the check (uncheck), and before they are lent they must combine to the
// page's own CRC, so a CRC kept for bytes since replaced is never sent.
//
// They cost 4 bytes per 4 KiB, so they are kept in chunks of 64 pages,
// and the cache holds a bounded number of chunks (subsKeeper): a chunk
// kept when the bound is reached drops the oldest, whichever file it
// belongs to, and those pages' pgreads read and check again, as before.

// subsChunk holds the pgread CRCs of 64 consecutive pages of a file.
type subsChunk struct {
	subs  []uint32 // 64 pages × pgPages per page
	known uint64   // a bit per page whose CRCs are in subs
	// slot is where its map holds it; the keeper empties it to drop it.
	slot *atomic.Pointer[subsChunk]
}

// subsKeeper bounds the chunks kept across the cache, dropping the
// oldest first.
type subsKeeper struct {
	mu   sync.Mutex
	ring []*subsChunk
	next int
}

// subsBudget is the memory kept pgread CRCs may take: 8,192 chunks of
// 64 pages of 32 KiB, the CRCs of 16 GiB of checked pages.
const subsBudget = 16 << 20

func newSubsKeeper(bytes int) *subsKeeper {
	per := 64 * (checkPage / pgPage) * 4
	return &subsKeeper{ring: make([]*subsChunk, max(bytes/per, 1))}
}

// add keeps c, dropping the oldest chunk if the ring is full.
func (k *subsKeeper) add(c *subsChunk) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old := k.ring[k.next]; old != nil {
		old.slot.CompareAndSwap(old, nil)
	}
	k.ring[k.next] = c
	k.next = (k.next + 1) % len(k.ring)
}

// keepSubs keeps the pgPage CRCs of the pages from p on that just passed
// their check: subs[i] is that of the i-th pgPage from page p's start.
// A page is kept only with all of its pgPages. Called with the entry's
// lock held.
func (m *blockMap) keepSubs(k *subsKeeper, p int, subs []uint32) {
	// Maps of earlier versions have larger pages (blocks, or 64 KiB),
	// whose chunks would outgrow the keeper's bound: their pgreads read.
	if len(subs) == 0 || m.pageSize%pgPage != 0 || m.pageSize > checkPage || k == nil {
		return
	}
	if m.pgSubs == nil {
		m.pgSubs = make([]atomic.Pointer[subsChunk], len(m.present))
	}
	per := int(m.pageSize / pgPage)
	for ; p < m.pages() && len(subs) > 0; p++ {
		n := pgPages(0, m.pageLen(p))
		if len(subs) < n {
			return
		}
		slot := &m.pgSubs[p/64]
		c := slot.Load()
		if c == nil {
			c = &subsChunk{subs: make([]uint32, 64*per), slot: slot}
			slot.Store(c)
			k.add(c)
		}
		copy(c.subs[p%64*per:], subs[:n])
		c.known |= 1 << (p % 64)
		subs = subs[n:]
	}
}

// forgetSubs forgets page p's kept CRCs. Called with the entry's lock
// held.
func (m *blockMap) forgetSubs(p int) {
	if m.pgSubs != nil {
		if c := m.pgSubs[p/64].Load(); c != nil {
			c.known &^= 1 << (p % 64)
		}
	}
}

// subsOf sets dst to the pgread CRCs of bytes [off, end) from those kept,
// if every page holding them has its CRCs kept and they still combine to
// the page's CRC. off must be a multiple of pgPage, and end too unless it
// is the end of the file. Called with the entry's lock held.
func (m *blockMap) subsOf(dst []uint32, off, end int64) bool {
	if m.pgSubs == nil || off < 0 || off >= end || end > m.size || off%pgPage != 0 || (end%pgPage != 0 && end != m.size) || m.pageSize%pgPage != 0 {
		return false
	}
	if len(dst) < pgPages(off, end-off) {
		return false
	}
	per := int(m.pageSize / pgPage)
	for p := int(off / m.pageSize); p <= int((end-1)/m.pageSize); p++ {
		c := m.pgSubs[p/64].Load()
		if c == nil || c.known&(1<<(p%64)) == 0 {
			return false
		}
		n := m.pageLen(p)
		subs := c.subs[p%64*per : p%64*per+pgPages(0, n)]
		if combinePages(subs, n) != m.crcs[p] {
			return false
		}
		// The page's part of [off, end).
		from, to := max(off, int64(p)*m.pageSize), min(end, int64(p)*m.pageSize+n)
		i := (from - int64(p)*m.pageSize) / pgPage
		copy(dst[(from-off)/pgPage:], subs[i:i+int64(pgPages(from, to-from))])
	}
	return true
}
