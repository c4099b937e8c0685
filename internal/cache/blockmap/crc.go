package blockmap

import "hash/crc32"

// SubPage is the piece of a page whose CRC32C the cache computes as it
// checks or fetches pages: 4 KiB, the page of kXR_pgread, whose CRCs a
// reader asking for them gets without a second pass over the bytes.
// Combined, the CRCs of a page's pieces give the page's own.
const SubPage = 4096

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC32C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

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

// shiftSub appends a SubPage of zeros to a CRC: a linear map on the
// CRC's bits, so tabled a byte at a time (four lookups instead of
// multModP's 32 steps; it runs once per 4 KiB a cache reads or writes).
var shiftSub = newShiftTable(SubPage)

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
	if lenB == SubPage {
		return shiftSub.apply(crcA) ^ crcB
	}
	return multModP(xPow8n(lenB), crcA) ^ crcB
}

// SubCRCs appends the CRC32C of each SubPage of buf (the last may be
// short) to dst.
func SubCRCs(dst []uint32, buf []byte) []uint32 {
	for off := 0; off < len(buf); off += SubPage {
		dst = append(dst, Checksum(buf[off:min(off+SubPage, len(buf))]))
	}
	return dst
}

// Combine is the CRC32C of n bytes whose SubPage CRCs are subs.
func Combine(subs []uint32, n int64) uint32 {
	crc := subs[0]
	for i, c := range subs[1:] {
		crc = crcCombine(crc, c, min(SubPage, n-int64(i+1)*SubPage))
	}
	return crc
}

// Subs is how many SubPages n bytes from a SubPage boundary have.
func Subs(n int64) int { return int((n + SubPage - 1) / SubPage) }

// PageCRCs are the CRC32Cs of buf's pages of the given size, combined
// from its SubPage CRCs subs when they are all there (the bytes are not
// read again), else computed.
func PageCRCs(buf []byte, subs []uint32, page int64) []uint32 {
	n := int64(len(buf))
	crcs := make([]uint32, 0, (n+page-1)/page)
	per := page / SubPage
	for off := int64(0); off < n; off += page {
		if page%SubPage != 0 || len(subs) != Subs(n) {
			crcs = append(crcs, Checksum(buf[off:min(off+page, n)]))
			continue
		}
		first := off / SubPage
		crcs = append(crcs, Combine(subs[first:min(first+per, int64(len(subs)))], min(page, n-off)))
	}
	return crcs
}
