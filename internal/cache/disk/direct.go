package disk

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"syscall"
	"unsafe"
)

// Cached data goes to disk with O_DIRECT when the filesystem allows it.
// Filling the page cache is what made XCache's cold reads slow: on a small
// VM each GB written through it costs 0.4–2.5 s of kernel CPU (measured
// here: buffered 1 MiB writes 0.3–1.2 s sys/GB, O_DIRECT 0.13 s/GB at
// 1.5 GB/s), CPU the clients' transfers need. The cache manages its own
// RAM; a second copy in the page cache buys little. Reads are another
// matter: they go through the page cache (data.go, stream.go), where a
// file read again costs a copy, not a disk read.

// DioAlign is the alignment O_DIRECT needs of buffers, offsets and
// lengths: the largest logical block size in common use.
const DioAlign = 4096

// AlignUp rounds n up to a multiple of DioAlign.
func AlignUp(n int64) int64 { return (n + DioAlign - 1) &^ (DioAlign - 1) }

// AlignedBuf returns n bytes whose first byte sits on a DioAlign boundary.
func AlignedBuf(n int64) []byte {
	b := make([]byte, n+DioAlign)
	off := 0
	if r := int(uintptr(unsafePointer(b)) & (DioAlign - 1)); r != 0 {
		off = DioAlign - r
	}
	return b[off : off+int(n) : off+int(n)]
}

// probeDirect reports whether files in the cache's tmp/ directory can be
// written and read with O_DIRECT (tmpfs and some network filesystems say
// EINVAL).
func (d *Dir) probeDirect() bool {
	var rnd [8]byte
	rand.Read(rnd[:])
	name := "tmp/direct-" + hex.EncodeToString(rnd[:])
	f, err := d.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_DIRECT, cacheFileMode)
	if err != nil {
		return false
	}
	defer d.root.Remove(name)
	defer f.Close()
	buf := AlignedBuf(DioAlign)
	if _, err := f.WriteAt(buf, 0); err != nil {
		return false
	}
	_, err = f.ReadAt(buf, 0)
	return err == nil
}

func unsafePointer(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }
