package tpc

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

// DirectBytes is the number of bytes written past the page cache so far.
func (j *Job) DirectBytes() int64 { return j.direct.Bytes() }

// writeAt writes p at off to the destination: past the page cache when
// it can.
func (j *Job) writeAt(p []byte, off int64) error {
	if j.direct.WriteAt(p, off) {
		return nil
	}
	_, err := j.Dst.File.WriteAt(p, off)
	return err
}
