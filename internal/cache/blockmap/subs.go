package blockmap

import (
	"sync"
	"sync/atomic"
)

// Keeping the SubPage CRCs of checked pages. A reader that wants a CRC32C
// per 4 KiB (a pgread) gets them from the check of the pages it reads
// (Verify) or from the fetch that brought them. Kept beside the page's
// checked bit, they let a later reader of checked pages still in the page
// cache borrow the bytes with their CRCs, where it otherwise read the
// pages into a buffer and computed the CRCs again: one copy and one pass
// over the bytes fewer. They are forgotten with the check (Uncheck), and
// before they are handed out they must combine to the page's own CRC, so
// a CRC kept for bytes since replaced is never sent.
//
// They cost 4 bytes per 4 KiB, so they are kept in chunks of 64 pages,
// and a cache holds a bounded number of chunks (Keeper): a chunk kept
// when the bound is reached drops the oldest, whichever file it belongs
// to, and those pages' readers read and check again.

// subsChunk holds the SubPage CRCs of 64 consecutive pages of a file.
type subsChunk struct {
	subs  []uint32 // 64 pages × their SubPages
	known uint64   // a bit per page whose CRCs are in subs
	// slot is where its map holds it; the keeper empties it to drop it.
	slot *atomic.Pointer[subsChunk]
}

// Keeper bounds the chunks kept across a cache, dropping the oldest
// first. Safe for concurrent use.
type Keeper struct {
	mu   sync.Mutex
	ring []*subsChunk
	next int
}

// NewKeeper keeps chunks of CheckPage pages in up to bytes of memory.
func NewKeeper(bytes int) *Keeper {
	per := 64 * (CheckPage / SubPage) * 4
	return &Keeper{ring: make([]*subsChunk, max(bytes/per, 1))}
}

// add keeps c, dropping the oldest chunk if the ring is full.
func (k *Keeper) add(c *subsChunk) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if old := k.ring[k.next]; old != nil {
		old.slot.CompareAndSwap(old, nil)
	}
	k.ring[k.next] = c
	k.next = (k.next + 1) % len(k.ring)
}

// KeepSubs keeps the SubPage CRCs of the pages from p on that just passed
// their check: subs[i] is that of the i-th SubPage from page p's start.
// A page is kept only with all of its SubPages.
func (m *Map) KeepSubs(k *Keeper, p int, subs []uint32) {
	// Maps of earlier versions have larger pages (blocks, or 64 KiB),
	// whose chunks would outgrow the keeper's bound: their readers read.
	if len(subs) == 0 || m.pageSize%SubPage != 0 || m.pageSize > CheckPage || k == nil {
		return
	}
	if m.subs == nil {
		m.subs = make([]atomic.Pointer[subsChunk], len(m.present))
	}
	per := int(m.pageSize / SubPage)
	for ; p < m.Pages() && len(subs) > 0; p++ {
		n := Subs(m.PageLen(p))
		if len(subs) < n {
			return
		}
		slot := &m.subs[p/64]
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

// forgetSubs forgets page p's kept CRCs.
func (m *Map) forgetSubs(p int) {
	if m.subs != nil {
		if c := m.subs[p/64].Load(); c != nil {
			c.known &^= 1 << (p % 64)
		}
	}
}

// SubsOf sets dst to the SubPage CRCs of bytes [off, end) from those
// kept, if every page holding them has its CRCs kept and they still
// combine to the page's CRC. off must be a multiple of SubPage, and end
// too unless it is the end of the file.
func (m *Map) SubsOf(dst []uint32, off, end int64) bool {
	if m.subs == nil || off < 0 || off >= end || end > m.size || off%SubPage != 0 || (end%SubPage != 0 && end != m.size) || m.pageSize%SubPage != 0 {
		return false
	}
	if len(dst) < Subs(end-off) {
		return false
	}
	per := int(m.pageSize / SubPage)
	for p := int(off / m.pageSize); p <= int((end-1)/m.pageSize); p++ {
		c := m.subs[p/64].Load()
		if c == nil || c.known&(1<<(p%64)) == 0 {
			return false
		}
		n := m.PageLen(p)
		subs := c.subs[p%64*per : p%64*per+Subs(n)]
		if Combine(subs, n) != m.crcs[p] {
			return false
		}
		// The page's part of [off, end).
		from, to := max(off, int64(p)*m.pageSize), min(end, int64(p)*m.pageSize+n)
		i := (from - int64(p)*m.pageSize) / SubPage
		copy(dst[(from-off)/SubPage:], subs[i:i+int64(Subs(to-from))])
	}
	return true
}
