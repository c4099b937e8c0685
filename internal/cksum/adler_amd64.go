package cksum

// On amd64 the blocks are summed with SSE2 (part of every amd64 CPU):
// PSADBW adds a block's bytes, PMADDWL weighs them, 16 bytes a step.

// adlerStep and adlerRunMax: adlerBlocks takes a multiple of adlerStep
// bytes, at most adlerRunMax, below which no 32-bit lane of adlerSSE2
// can overflow (the sum of the sums before each block grows with the
// square of the blocks: 2040·1024²/2 < 2^32).
const (
	adlerStep   = 16
	adlerRunMax = 16 << 10
)

//go:noescape
func adlerSSE2(p []byte) (sum, before, weighted uint64)

// adlerBlocks continues the sums s1 and s2 over p.
func adlerBlocks(s1, s2 uint64, p []byte) (uint64, uint64) {
	sum, before, weighted := adlerSSE2(p)
	// s2 gains s1 as it was once per byte: s1 as it came in, plus the
	// blocks summed before each block, 16 times; and each byte once
	// for each byte from it to its block's end.
	s2 += uint64(len(p))*s1 + adlerStep*before + weighted
	return s1 + sum, s2
}
