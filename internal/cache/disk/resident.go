package disk

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"sitebox/internal/nbio"
)

// What the page cache holds. The cache's checks of its pages (see
// blockmap) are once per trip from disk: a page checked and still in the
// page cache may be copied or lent without another check, one the kernel
// dropped must be read from disk and checked again. These are the
// kernel's answers: ReadResident reads only what the page cache holds,
// and Resident and Mapping.Resident ask without reading.

// ReadResident reads len(dst) bytes at off from f only if the page cache
// holds them all: a read that would wait for the disk returns false at
// once (preadv2 with RWF_NOWAIT, without the scheduler's bookkeeping for
// a call that may block: see nbio), and the caller reads and checks whole
// pages instead. A kernel or filesystem without RWF_NOWAIT turns it off
// for good.
//
// missing reports that some of the bytes were not in the page cache. The
// kernel may have started reading them back from disk: they will be in
// the page cache unchecked, and the caller must forget their check
// before another reader finds them there.
func (d *Dir) ReadResident(f *os.File, dst []byte, off int64) (ok, missing bool) {
	if d.noResident.Load() || len(dst) > nbio.MaxQuick {
		return false, false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	n := 0
	rerr := rc.Read(func(fd uintptr) bool {
		n, err = nbio.ReadResident(int(fd), dst, off)
		return true
	})
	if errors.Is(err, errors.ErrUnsupported) {
		d.noResident.Store(true)
	}
	return rerr == nil && err == nil && n == len(dst), errors.Is(err, nbio.ErrNotResident)
}

// AskMincore makes residency questions go to mincore, as on a kernel
// without cachestat (before Linux 6.5), or back to cachestat.
func (d *Dir) AskMincore(yes bool) { d.noCachestat.Store(yes) }

// cachedFD asks cachestat whether the page cache holds bytes [off, end)
// of the file fd; asked is false where the kernel has no cachestat
// (before Linux 6.5), which it remembers.
func (d *Dir) cachedFD(fd int, off, end int64) (ok, asked bool) {
	if d.noCachestat.Load() {
		return false, false
	}
	ok, err := nbio.Cached(fd, off, end-off)
	if errors.Is(err, errors.ErrUnsupported) {
		d.noCachestat.Store(true)
		return false, false
	}
	return ok && err == nil, true
}

// adviseRandom tells the kernel not to read ahead on f: pages reach the
// page cache only through reads that check them, and a scattered
// reader's neighbouring pages are rarely wanted. Streams read through a
// reader of their own, which reads ahead (stream.go).
func adviseRandom(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Fadvise(int(fd), 0, 0, unix.FADV_RANDOM) })
	}
}
