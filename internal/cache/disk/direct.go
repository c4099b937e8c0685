package disk

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"syscall"

	"sitebox/internal/dio"
)

// Cached data goes to disk with O_DIRECT when the filesystem allows it.
// Filling the page cache is what made XCache's cold reads slow: on a small
// VM each GB written through it costs 0.4–2.5 s of kernel CPU (measured
// here: buffered 1 MiB writes 0.3–1.2 s sys/GB, O_DIRECT 0.13 s/GB at
// 1.5 GB/s), CPU the clients' transfers need. The cache manages its own
// RAM; a second copy in the page cache buys little. Reads are another
// matter: they go through the page cache (data.go, stream.go), where a
// file read again costs a copy, not a disk read.

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
	buf := dio.Buf(dio.Align)
	if _, err := f.WriteAt(buf, 0); err != nil {
		return false
	}
	_, err = f.ReadAt(buf, 0)
	return err == nil
}
