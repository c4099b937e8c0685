package tpc

import (
	"os"
	"sync/atomic"

	"sitebox/internal/dio"
	"sitebox/internal/store"
)

// A copy landing on a local disk (ext4, XFS, btrfs: not a network
// filesystem, where each such write would wait for the server) writes
// its data past the page cache (O_DIRECT). Written through the page
// cache, every byte was copied once more by the destination's kernel
// (copy_folio_from_iter: up to half of the destination's time in a
// 1 GiB HTTP-TPC pull, and more when the pages come from memory the
// machine has not touched lately, as on a VM that hands freed memory
// back to its host), and written out again by the flusher or by the
// landing's rename. A copied file is seldom read back at once; when it
// is, its first read comes from the disk, as after any reboot. The
// cache writes its data files the same way (internal/cache/disk).
//
// Only whole aligned pieces go this way (dio.Aligned): the chunk
// buffers are aligned and pieces are multiples of the alignment, so
// that is all of a copy from an https or a local source except its last
// piece. A root:// source hands over the buffers its connection filled,
// written as they come: past the page cache when they are aligned (the
// client's own are), through it when not. A direct write that fails
// is written again the usual way, whose error, if any, is the one the
// copy reports, and the copy writes through the page cache from then
// on.

// direct is the destination's O_DIRECT descriptor, while it works (nil
// once a write failed, or the copy ended).
type direct struct{ f atomic.Pointer[os.File] }

// openDirect opens f's file again with O_DIRECT: nil when f is not a
// file on a local disk (dio.OnLocalDisk) or its filesystem refuses.
func openDirect(f store.WritableFile) *direct {
	sf, ok := store.As[store.SendFiler](f)
	if !ok || !dio.OnLocalDisk(sf.Fd()) {
		return nil
	}
	df, err := dio.Reopen(sf.Fd())
	if err != nil {
		return nil
	}
	d := &direct{}
	d.f.Store(df)
	return d
}

// DirectBytes is the number of bytes written past the page cache so far.
func (j *Job) DirectBytes() int64 { return j.directBytes.Load() }

// writeAt writes p at off to the destination: past the page cache when
// it can.
func (j *Job) writeAt(p []byte, off int64) error {
	if j.direct.write(p, off) {
		j.directBytes.Add(int64(len(p)))
		return nil
	}
	_, err := j.Dst.File.WriteAt(p, off)
	return err
}

// write writes p at off with O_DIRECT and reports whether it did. A
// failed write turns direct writes off for the rest of the copy.
func (d *direct) write(p []byte, off int64) bool {
	if !d.on() || !dio.Aligned(p, off) {
		return false
	}
	f := d.f.Load()
	if f == nil {
		return false
	}
	if _, err := f.WriteAt(p, off); err != nil {
		d.close()
		return false
	}
	return true
}

// on reports whether writes go past the page cache now.
func (d *direct) on() bool { return d != nil && d.f.Load() != nil }

// close closes the O_DIRECT descriptor; writes after it go through the
// page cache. A write still under way on it ends first (os.File).
func (d *direct) close() {
	if d == nil {
		return
	}
	if f := d.f.Swap(nil); f != nil {
		f.Close()
	}
}
