package disk

import (
	"testing"
	"unsafe"
)

func TestAlignedBuf(t *testing.T) {
	for _, n := range []int64{DioAlign, 64 << 10, 1<<20 + 1} {
		b := AlignedBuf(n)
		if int64(len(b)) != n || int64(cap(b)) != n || uintptr(unsafe.Pointer(&b[0]))%DioAlign != 0 {
			t.Fatalf("AlignedBuf(%d): len %d cap %d addr %p", n, len(b), cap(b), &b[0])
		}
	}
	if AlignUp(1) != DioAlign || AlignUp(DioAlign) != DioAlign || AlignUp(0) != 0 {
		t.Fatal("AlignUp")
	}
}
