package cksum

import (
	"encoding/binary"
	"hash"
)

// hash/adler32 adds one byte at a time, each step waiting on the last:
// about one byte per cycle, which made adler32 the largest single cost
// of receiving a third-party copy (a fifth of the destination's CPU).
// Adler32Update sums a block of bytes at a time instead, with SIMD
// instructions where there are (adler_amd64.s), else eight bytes a step
// in 16-bit lanes of 64-bit words (adlerLanes), and folds each run of
// blocks into the two adler32 sums.

// lanesBlock is the bytes adlerLanes sums before they are folded: 16
// words, the most for which no 16-bit lane can overflow.
const lanesBlock = 128

// lanesRunMax is the most bytes adlerBlocksLanes takes; the 64-bit sums
// cannot overflow within it.
const lanesRunMax = 64 << 10

// Adler32Update continues the adler32 sum adler (1 for no data yet) over
// p: Adler32Update(1, p) is adler32.Checksum(p).
func Adler32Update(adler uint32, p []byte) uint32 {
	return adlerUpdate(adler, p, adlerBlocks, adlerStep, adlerRunMax)
}

// adlerUpdate is Adler32Update with blocks summing runs of whole blocks
// of step bytes, at most runMax at a time; the sums are reduced modulo
// adlerMod after each run.
func adlerUpdate(adler uint32, p []byte, blocks func(s1, s2 uint64, p []byte) (uint64, uint64), step, runMax int) uint32 {
	s1, s2 := uint64(adler&0xffff), uint64(adler>>16)
	for len(p) >= step {
		n := min(len(p), runMax) / step * step
		s1, s2 = blocks(s1, s2, p[:n])
		s1 %= adlerMod
		s2 %= adlerMod
		p = p[n:]
	}
	for _, b := range p {
		s1 += uint64(b)
		s2 += s1
	}
	return uint32(s2%adlerMod)<<16 | uint32(s1%adlerMod)
}

// adlerBlocksLanes continues s1 and s2 over p, a multiple of lanesBlock
// bytes.
func adlerBlocksLanes(s1, s2 uint64, p []byte) (uint64, uint64) {
	for ; len(p) >= lanesBlock; p = p[lanesBlock:] {
		sum, weighted := adlerLanes((*[lanesBlock]byte)(p))
		// Each byte of the block is added to s1 and, after that, s1 to
		// s2: s2 gains s1 as it was once per byte, plus every byte once
		// for each byte from it to the block's end.
		s2 += lanesBlock*s1 + weighted
		s1 += sum
	}
	return s1, s2
}

// adlerLanes returns the sum of the block's bytes and their sum weighted
// by position (the first byte 128 times, the last once).
func adlerLanes(q *[lanesBlock]byte) (sum, weighted uint64) {
	const m = 0x00ff00ff00ff00ff
	// even and odd hold the sums of the words' bytes 0, 2, 4, 6 and 1,
	// 3, 5, 7, one per 16-bit lane (at most 16×255); before is, per
	// lane, the sum of even+odd as it was before each word, so its lanes
	// add up to Σ (15-t)·(bytes of word t), at most 120×2×255.
	var even, odd, before uint64
	for i := 0; i < lanesBlock; i += 32 {
		x0 := binary.LittleEndian.Uint64(q[i:])
		x1 := binary.LittleEndian.Uint64(q[i+8:])
		x2 := binary.LittleEndian.Uint64(q[i+16:])
		x3 := binary.LittleEndian.Uint64(q[i+24:])
		before += even + odd
		even += x0 & m
		odd += (x0 >> 8) & m
		before += even + odd
		even += x1 & m
		odd += (x1 >> 8) & m
		before += even + odd
		even += x2 & m
		odd += (x2 >> 8) & m
		before += even + odd
		even += x3 & m
		odd += (x3 >> 8) & m
	}
	const m32 = 0x0000ffff0000ffff
	// Four 16-bit lanes add up in the top lane of a multiplication by
	// 1+2^16+2^32+2^48: their total (at most 8×16×255) fits it.
	sum = ((even + odd) * 0x0001000100010001) >> 48
	b := (before & m32) + ((before >> 16) & m32)
	words := (b & 0xffffffff) + b>>32
	// The bytes' weights within a word, 8 for byte 0 to 1 for byte 7,
	// by the same trick in 32-bit lanes: each lane pair is (low byte's
	// sum, high byte's sum), and the weights go crosswise.
	inWord := ((even&m32)*(4|8<<32) + ((even>>16)&m32)*(2|6<<32) +
		(odd&m32)*(3|7<<32) + ((odd>>16)&m32)*(1|5<<32)) >> 32
	return sum, 8*words + inWord
}

// adler32Hash is hash.Hash32 over Adler32Update.
type adler32Hash struct{ sum uint32 }

// NewAdler32 returns an adler32 hash.Hash32, as hash/adler32.New, that
// sums with Adler32Update.
func NewAdler32() hash.Hash32 { return &adler32Hash{sum: 1} }

func (h *adler32Hash) Write(p []byte) (int, error) {
	h.sum = Adler32Update(h.sum, p)
	return len(p), nil
}

func (h *adler32Hash) Sum(b []byte) []byte { return binary.BigEndian.AppendUint32(b, h.sum) }
func (h *adler32Hash) Sum32() uint32       { return h.sum }
func (h *adler32Hash) Reset()              { h.sum = 1 }
func (h *adler32Hash) Size() int           { return 4 }
func (h *adler32Hash) BlockSize() int      { return 4 }
