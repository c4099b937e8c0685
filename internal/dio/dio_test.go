package dio

import "testing"

func TestBuf(t *testing.T) {
	for _, n := range []int64{Align, 64 << 10, 1<<20 + 1} {
		b := Buf(n)
		if int64(len(b)) != n || int64(cap(b)) != n || addr(b)%Align != 0 {
			t.Fatalf("Buf(%d): len %d cap %d addr %#x", n, len(b), cap(b), addr(b))
		}
	}
	if AlignUp(1) != Align || AlignUp(Align) != Align || AlignUp(0) != 0 {
		t.Fatal("AlignUp")
	}
}

func TestAligned(t *testing.T) {
	b := Buf(4 * Align)
	for _, c := range []struct {
		p    []byte
		off  int64
		want bool
	}{
		{b, 0, true},
		{b[:Align], 8 * Align, true},
		{b[Align:], Align, true},
		{b, 512, false},            // offset
		{b[:Align+1], 0, false},    // length
		{b[1 : Align+1], 0, false}, // memory
		{b[:0], 0, false},          // nothing to write
	} {
		if got := Aligned(c.p, c.off); got != c.want {
			t.Errorf("Aligned(len %d at %#x, off %d) = %v, want %v", len(c.p), addr(c.p)%Align, c.off, got, c.want)
		}
	}
}
