//go:build !amd64

package cksum

const (
	adlerStep   = lanesBlock
	adlerRunMax = lanesRunMax
)

func adlerBlocks(s1, s2 uint64, p []byte) (uint64, uint64) { return adlerBlocksLanes(s1, s2, p) }
