package cksum

import (
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

func TestAdler32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 2, 100, 65521, 65522, 1 << 20, 3<<20 + 7} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if size == 65522 {
			for i := range data {
				data[i] = 0xff // the largest sums: the reductions' edges
			}
		}
		want := adler32.Checksum(data)
		for _, cut := range []int{0, size / 3, size / 2, size} {
			got := Adler32Combine(adler32.Checksum(data[:cut]), adler32.Checksum(data[cut:]), int64(size-cut))
			if got != want {
				t.Errorf("size %d cut at %d: combined %08x, want %08x", size, cut, got, want)
			}
		}
		// Many pieces folded in order, as a copy's chunks are.
		sum, piece := adler32.Checksum(nil), 4096+size/7
		for off := 0; off < size; off += piece {
			end := min(off+piece, size)
			sum = Adler32Combine(sum, adler32.Checksum(data[off:end]), int64(end-off))
		}
		if sum != want {
			t.Errorf("size %d in pieces of %d: %08x, want %08x", size, piece, sum, want)
		}
	}
}
