package cksum

import (
	"bytes"
	"hash/adler32"
	"math/rand/v2"
	"testing"
)

// TestAdler32UpdateMatchesStdlib checks the lane sums against
// hash/adler32 on lengths around the block and run sizes, on bytes that
// push every lane to its largest value (all 0xff) and on random ones,
// continued from random earlier sums.
func TestAdler32UpdateMatchesStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3*adlerRun+1000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	full := bytes.Repeat([]byte{0xff}, len(random))
	lengths := []int{0, 1, 7, 8, 127, 128, 129, 255, 256, 1000, adlerRun - 1, adlerRun, adlerRun + 1, adlerRun + 127, 2*adlerRun + 129, len(random)}
	for _, data := range [][]byte{random, full, make([]byte, len(random))} {
		for _, n := range lengths {
			if got, want := Adler32Update(1, data[:n]), adler32.Checksum(data[:n]); got != want {
				t.Fatalf("length %d (first byte %#x): %08x, want %08x", n, data[0], got, want)
			}
			// Continuing a sum equals summing the whole.
			for _, cut := range []int{0, n / 3, n / 2} {
				if got, want := Adler32Update(Adler32Update(1, data[:cut]), data[cut:n]), adler32.Checksum(data[:n]); got != want {
					t.Fatalf("length %d cut at %d: %08x, want %08x", n, cut, got, want)
				}
			}
		}
	}
	h := NewAdler32()
	h.Write(random[:1000])
	h.Write(random[1000:5000])
	if got, want := h.Sum(nil), adler32.New(); !bytes.Equal(got, func() []byte { want.Write(random[:5000]); return want.Sum(nil) }()) {
		t.Fatalf("hash: %x", got)
	}
}

func BenchmarkAdler32Update(b *testing.B) {
	p := make([]byte, 128<<10)
	for i := range p {
		p[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(p)))
	b.Run("lanes", func(b *testing.B) {
		for b.Loop() {
			Adler32Update(1, p)
		}
	})
	b.Run("stdlib", func(b *testing.B) {
		for b.Loop() {
			adler32.Checksum(p)
		}
	})
}
