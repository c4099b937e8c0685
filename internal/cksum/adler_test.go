package cksum

import (
	"bytes"
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestAdler32UpdateMatchesStdlib checks Adler32Update, and the portable
// lane sums whatever the machine, against hash/adler32: on lengths
// around the blocks and runs, on bytes that push every lane to its
// largest value (all 0xff), on zeros and on random bytes, and continued
// from earlier sums.
func TestAdler32UpdateMatchesStdlib(t *testing.T) {
	const big = lanesRunMax
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3*big+1000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	full := bytes.Repeat([]byte{0xff}, len(random))
	lengths := []int{0, 1, 7, 15, 16, 17, 127, 128, 129, 255, 256, 1000,
		adlerRunMax - 1, adlerRunMax, adlerRunMax + 17, big - 1, big, big + 1, big + 127, 2*big + 129, len(random)}
	impls := map[string]func(uint32, []byte) uint32{
		"Adler32Update": Adler32Update,
		"lanes": func(a uint32, p []byte) uint32 {
			return adlerUpdate(a, p, adlerBlocksLanes, lanesBlock, lanesRunMax)
		},
	}
	for name, update := range impls {
		for _, data := range [][]byte{random, full, make([]byte, len(random))} {
			for _, n := range lengths {
				want := adler32.Checksum(data[:n])
				if got := update(1, data[:n]); got != want {
					t.Fatalf("%s, length %d (first byte %#x): %08x, want %08x", name, n, data[0], got, want)
				}
				// Continuing a sum equals summing the whole, wherever
				// the data is cut.
				for _, cut := range []int{1, n / 3, n / 2} {
					cut = min(cut, n)
					if got := update(update(1, data[:cut]), data[cut:n]); got != want {
						t.Fatalf("%s, length %d cut at %d: %08x, want %08x", name, n, cut, got, want)
					}
				}
			}
		}
	}
	h, want := NewAdler32(), adler32.New()
	for _, p := range [][]byte{random[:1000], random[1000:5000]} {
		h.Write(p)
		want.Write(p)
	}
	if !bytes.Equal(h.Sum([]byte("x")), want.Sum([]byte("x"))) || h.Sum32() != want.Sum32() {
		t.Fatalf("hash: %x, want %x", h.Sum(nil), want.Sum(nil))
	}
	if h.Reset(); h.Sum32() != 1 {
		t.Fatal("Reset does not start over")
	}
}

func BenchmarkAdler32Update(b *testing.B) {
	p := make([]byte, 128<<10)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(p)))
	b.Run("simd", func(b *testing.B) {
		for b.Loop() {
			Adler32Update(1, p)
		}
	})
	b.Run("lanes", func(b *testing.B) {
		for b.Loop() {
			adlerUpdate(1, p, adlerBlocksLanes, lanesBlock, lanesRunMax)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}
