package cache

import "sitebox/internal/cache/blockmap"

// pgPage is the page of kXR_pgread: a CRC32C per 4 KiB of the file,
// the SubPage a cache computes CRCs of as it checks its pages.
const pgPage = blockmap.SubPage

// pgOut collects the pgPage CRCs of a read: out[i] is the CRC32C of its
// i-th pgread page, from base to the next multiple of pgPage, then
// pgPage at a time.
type pgOut struct {
	base int64
	out  []uint32
}

// fill sets the CRCs of the pages of the read within [from, from+len(dst)),
// which dst holds. subs are the CRCs of the source's pgPages from subBase
// (a multiple of pgPage) up to srcEnd, known already; pages that are not
// one of those whole are computed.
func (pg *pgOut) fill(from int64, dst []byte, subs []uint32, subBase, srcEnd int64) {
	if pg == nil {
		return
	}
	to := from + int64(len(dst))
	for start := from; start < to; {
		end := min((start/pgPage+1)*pgPage, to)
		i := start/pgPage - pg.base/pgPage
		k := (start - subBase) / pgPage
		if start%pgPage == 0 && start >= subBase && k < int64(len(subs)) && end == min(start+pgPage, srcEnd) {
			pg.out[i] = subs[k]
		} else {
			pg.out[i] = blockmap.Checksum(dst[start-from : end-from])
		}
		start = end
	}
}

// pgPages is how many pgread pages [off, off+n) has.
func pgPages(off, n int64) int {
	if n <= 0 {
		return 0
	}
	return int((off+n-1)/pgPage - off/pgPage + 1)
}
