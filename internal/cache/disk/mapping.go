package disk

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"sitebox/internal/nbio"
)

// Mapped data files. Lending bytes from a mapping of the data file lets
// a server hand pages in the page cache to its writev, which the kernel
// copies straight into the socket: one copy per byte and one system call
// per segment fewer than reading them into a buffer first. A data file
// is mapped whole, read-only, for as long as its Data holds the mapping
// and every holder of a reference (a reader that lent from it) keeps it.
// Data files are never shortened while open, only removed, and a removed
// file's mapping stays readable.

// MaxMappings bounds the data files mapped at once (LimitMappings). Each mapping is one
// entry in the process's table of memory areas (vm.max_map_count, 65,530
// by default), which the Go heap needs too; past the bound reads copy.
const MaxMappings = 4096

// Mapping is a data file mapped into memory.
type Mapping struct {
	b    []byte
	fd   int // the data file's reader, open while its Data holds the mapping
	refs atomic.Int32
	dir  *Dir
}

// LimitMappings sets how many data files may be mapped at once.
func (d *Dir) LimitMappings(n int64) { d.maxMappings.Store(n) }

// Mapped is how many data files are mapped.
func (d *Dir) Mapped() int64 { return d.mappings.Load() }

// mapFile maps f, or returns nil when it cannot (too many mappings, an
// empty file, a failed system call): readers then copy.
func (d *Dir) mapFile(f *os.File) *Mapping {
	if d.mappings.Add(1) > d.maxMappings.Load() {
		d.mappings.Add(-1)
		return nil
	}
	var mp *Mapping
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && int64(int(fi.Size())) == fi.Size() {
		if b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			// The bytes are lent a few pages at a time: no read-ahead
			// on a fault (the page cache holds them, see Resident).
			unix.Madvise(b, unix.MADV_RANDOM)
			mp = &Mapping{b: b, fd: int(f.Fd()), dir: d}
			mp.refs.Store(1)
		}
	}
	if mp == nil {
		d.mappings.Add(-1)
	}
	return mp
}

// Ref takes a reference: the bytes stay mapped until it is dropped.
func (mp *Mapping) Ref() { mp.refs.Add(1) }

// Unref drops a reference; the last unmaps the file.
func (mp *Mapping) Unref() {
	if mp.refs.Add(-1) == 0 {
		unix.Munmap(mp.b)
		mp.dir.mappings.Add(-1)
	}
}

// Len is the length of the mapped file.
func (mp *Mapping) Len() int64 { return int64(len(mp.b)) }

// Bytes are the mapped bytes [off, end), which may only be passed to
// system calls: a user-space access to a page the file no longer has
// kills the process (SIGBUS), where a system call fails with EFAULT.
func (mp *Mapping) Bytes(off, end int64) []byte { return mp.b[off:end:end] }

// Resident reports whether the page cache holds bytes [off, end) of the
// mapped file (end at most Len): cachestat on the file (Linux 6.5 on),
// else mincore on the mapping, which costs three times as much (it walks
// the page tables under the process's memory-map lock). The descriptor
// is open while the mapping's Data holds it.
func (mp *Mapping) Resident(off, end int64) bool {
	if ok, asked := mp.dir.cachedFD(mp.fd, off, end); asked {
		return ok
	}
	page := int64(os.Getpagesize())
	ok, err := nbio.Resident(mp.b[off&^(page-1) : end])
	return ok && err == nil
}
