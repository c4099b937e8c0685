package cache

import "hash/crc32"

// pgPage is the page of kXR_pgread: a CRC32C per 4 KiB of the file. A
// cache checks the CRC32C of every page (32 KiB) it reads from disk, and
// computes it for every page it writes; computed per 4 KiB and combined,
// the same pass yields what a pgread sends, so the server need not read
// the bytes a second time (see File.ReadPagesAt).
const pgPage = 4096

// castagnoliReflected is the CRC32C polynomial in the bit order crc32
// uses.
const castagnoliReflected = 0x82f63b78

// multModP is a×b modulo the CRC32C polynomial, in reflected form
// (zlib's multmodp).
func multModP(a, b uint32) uint32 {
	m, p := uint32(1)<<31, uint32(0)
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ castagnoliReflected
		} else {
			b >>= 1
		}
	}
}

// xPow8n is x^(8n) modulo the polynomial: the operator that appends n
// zero bytes to a CRC.
func xPow8n(n int64) uint32 {
	p := uint32(1) << 31  // x^0
	sq := uint32(1) << 30 // x^1, squared as n's bits are walked
	for k := 0; k < 3; k++ {
		sq = multModP(sq, sq) // x^8 after three squarings
	}
	for ; n > 0; n >>= 1 {
		if n&1 != 0 {
			p = multModP(sq, p)
		}
		sq = multModP(sq, sq)
	}
	return p
}

// shiftPage appends a pgPage of zeros to a CRC: a linear map on the
// CRC's bits, so tabled a byte at a time (four lookups instead of
// multModP's 32 steps; it runs once per 4 KiB a cache reads or writes).
var shiftPage = newShiftTable(pgPage)

type shiftTable [4][256]uint32

func newShiftTable(n int64) *shiftTable {
	op := xPow8n(n)
	t := new(shiftTable)
	for k := range t {
		for b := range 256 {
			t[k][b] = multModP(op, uint32(b)<<(8*k))
		}
	}
	return t
}

func (t *shiftTable) apply(crc uint32) uint32 {
	return t[0][crc&0xff] ^ t[1][crc>>8&0xff] ^ t[2][crc>>16&0xff] ^ t[3][crc>>24]
}

// crcCombine is the CRC32C of a‖b from a's and b's CRCs and b's length
// (zlib's crc32_combine).
func crcCombine(crcA, crcB uint32, lenB int64) uint32 {
	if lenB == pgPage {
		return shiftPage.apply(crcA) ^ crcB
	}
	return multModP(xPow8n(lenB), crcA) ^ crcB
}

// subPageCRCs appends the CRC32C of each pgPage of buf (the last may be
// short) to dst.
func subPageCRCs(dst []uint32, buf []byte) []uint32 {
	for off := 0; off < len(buf); off += pgPage {
		dst = append(dst, crc32.Checksum(buf[off:min(off+pgPage, len(buf))], castagnoli))
	}
	return dst
}

// combinePages is the CRC32C of n bytes whose pgPage CRCs are subs.
func combinePages(subs []uint32, n int64) uint32 {
	crc := subs[0]
	for i, c := range subs[1:] {
		crc = crcCombine(crc, c, min(pgPage, n-int64(i+1)*pgPage))
	}
	return crc
}

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
			pg.out[i] = crc32.Checksum(dst[start-from:end-from], castagnoli)
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
