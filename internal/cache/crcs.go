package cache

import (
	"sitebox/internal/cache/blockmap"
	"sitebox/internal/store"
)

// A loan's CRCs (store.LendOptions.CRCs) are a CRC32C per 4 KiB from an
// offset that is a multiple of 4 KiB: the pieces the cache computes CRCs
// of as it checks or fetches pages (blockmap.SubPage), so a read gets
// them from that pass instead of a second one.
var _ = [1]struct{}{}[store.CRCPage-blockmap.SubPage] // the same unit: fails to compile otherwise

// crcOut collects the CRCs of a read from base, a multiple of
// blockmap.SubPage: out[i] is the CRC32C of the read's bytes in
// [base+i×SubPage, base+(i+1)×SubPage).
type crcOut struct {
	base int64
	out  []uint32
}

// fill sets the CRCs of the read's bytes [from, from+len(dst)), which dst
// holds. subs are the CRCs of the source's SubPages from subBase (a
// multiple of SubPage) up to srcEnd, known already; pieces that are not
// one of those whole are computed. A nil crcOut wants none.
func (c *crcOut) fill(from int64, dst []byte, subs []uint32, subBase, srcEnd int64) {
	if c == nil {
		return
	}
	const sub = blockmap.SubPage
	to := from + int64(len(dst))
	for start := from; start < to; {
		end := min((start/sub+1)*sub, to)
		i := (start - c.base) / sub
		k := (start - subBase) / sub
		if start%sub == 0 && start >= subBase && k < int64(len(subs)) && end == min(start+sub, srcEnd) {
			c.out[i] = subs[k]
		} else {
			c.out[i] = blockmap.Checksum(dst[start-from : end-from])
		}
		start = end
	}
}

// upTo is the CRCs of the read up to end, or nil for a nil crcOut.
func (c *crcOut) upTo(end int64) []uint32 {
	if c == nil {
		return nil
	}
	return c.out[:blockmap.Subs(end-c.base)]
}
