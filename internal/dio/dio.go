// Package dio holds what writing past the page cache (O_DIRECT) asks of
// buffers, offsets and lengths, for the parts of sitebox that write so:
// the cache's data files, third-party copies landing on local disk, and
// the doctor's disk test.
package dio

import "unsafe"

// Align is the alignment O_DIRECT needs of buffers, offsets and lengths:
// the largest logical block size in common use.
const Align = 4096

// AlignUp rounds n up to a multiple of Align.
func AlignUp(n int64) int64 { return (n + Align - 1) &^ (Align - 1) }

// Buf returns n bytes whose first byte sits on an Align boundary.
func Buf(n int64) []byte {
	b := make([]byte, n+Align)
	off := 0
	if r := int(addr(b) & (Align - 1)); r != 0 {
		off = Align - r
	}
	return b[off : off+int(n) : off+int(n)]
}

// Aligned reports whether p may be written at off with O_DIRECT: its
// memory, off and its length all on Align boundaries.
func Aligned(p []byte, off int64) bool {
	return len(p) > 0 && addr(p)&(Align-1) == 0 && off&(Align-1) == 0 && len(p)&(Align-1) == 0
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
