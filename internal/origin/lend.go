package origin

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"sitebox/internal/nbio"
	"sitebox/internal/store"
)

// Mapped loans. A read answered with pages of a mapping of the file
// (store.LendOptions.Mapped: a vector read's segments on a plain socket)
// goes from the page cache to the socket in the server's writev: one
// copy of each byte instead of two, into a buffer and then into the
// socket. Only pages the page cache holds are lent, so the writev never
// waits for the disk; the rest is read as ReadAt reads. A file is mapped
// whole, read-only, at its size when first lent from, until it is closed
// and the last loan given back; bytes past that size are read.
//
// A file another program shortens while a loan of its vanished pages is
// being written fails that write (EFAULT) and so ends the connection:
// the caller only hands the bytes to system calls (see
// store.LendOptions), never touches them in user space, where the same
// page would kill the process (SIGBUS).

// maxMappings bounds the files an export has mapped at once. Each mapping
// is one entry in the process's table of memory areas (vm.max_map_count,
// 65,530 by default), which the Go heap needs too; past the bound, reads
// copy.
const maxMappings = 4096

// mapping is a file mapped into memory, unmapped when the last reference
// (the file's, each loan's) is dropped.
type mapping struct {
	b    []byte
	refs atomic.Int32
	ex   *export
}

func (m *mapping) unref() {
	if m.refs.Add(-1) == 0 {
		unix.Munmap(m.b)
		m.ex.mappings.Add(-1)
	}
}

// fileMap is a file's mapping, made at the first mapped loan.
type fileMap struct {
	mu     sync.Mutex
	m      *mapping
	closed bool // no mapping any more: tried and failed, or the file is closed
}

// Lend implements store.Lender: bytes the page cache holds, lent from the
// mapping when the caller allows mapped pages and asks for no CRCs
// (which a mapping cannot give without reading the pages), else read
// into buf.
func (f *file) Lend(off int64, buf []byte, opts store.LendOptions) (store.Loan, error) {
	if opts.Mapped && opts.CRCs == nil && off >= 0 && len(buf) > 0 {
		if m := f.mapped(); m != nil {
			end := min(off+int64(len(buf)), int64(len(m.b)))
			if off < end && f.resident(m, off, end) {
				return store.Lent(m.b[off:end:end], nil, m.unref), nil
			}
			m.unref()
		}
	}
	n, err := f.ReadAt(buf, off)
	switch {
	case n == len(buf):
		err = nil // a full read says nothing of the end yet
	case err != nil && !errors.Is(err, io.EOF):
		return store.Loan{}, err
	}
	return store.Lent(buf[:n], nil, nil), err
}

// mapped is the file's mapping with a reference taken, or nil.
func (f *file) mapped() *mapping {
	f.mm.mu.Lock()
	defer f.mm.mu.Unlock()
	if f.mm.m == nil && !f.mm.closed {
		f.mm.m = f.ex.mapFile(f.f)
		f.mm.closed = f.mm.m == nil
	}
	if f.mm.m != nil {
		f.mm.m.refs.Add(1)
	}
	return f.mm.m
}

// unmap drops the file's reference to its mapping (Close).
func (f *file) unmap() {
	f.mm.mu.Lock()
	m := f.mm.m
	f.mm.m, f.mm.closed = nil, true
	f.mm.mu.Unlock()
	if m != nil {
		m.unref()
	}
}

// resident reports whether the page cache holds bytes [off, end) of the
// file: cachestat on its descriptor (Linux 6.5 on), else mincore on the
// mapping, which walks the page tables under the memory-map lock. Both
// are made without the scheduler's bookkeeping (nbio): they never wait.
func (f *file) resident(m *mapping, off, end int64) bool {
	if !f.ex.noCachestat.Load() {
		ok, err := nbio.Cached(int(f.f.Fd()), off, end-off)
		if !errors.Is(err, errors.ErrUnsupported) {
			return ok && err == nil
		}
		f.ex.noCachestat.Store(true)
	}
	page := int64(os.Getpagesize())
	ok, err := nbio.Resident(m.b[off&^(page-1) : end])
	return ok && err == nil
}

// mapFile maps f whole, or returns nil when it may not or cannot (too
// many mappings, an empty file, a failed system call): reads then copy.
func (ex *export) mapFile(f *os.File) *mapping {
	if !nbio.Supported {
		return nil
	}
	if ex.mappings.Add(1) > maxMappings {
		ex.mappings.Add(-1)
		return nil
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() > 0 && int64(int(fi.Size())) == fi.Size() {
		if b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED); err == nil {
			// Only resident pages are lent: no read-ahead on a fault.
			unix.Madvise(b, unix.MADV_RANDOM)
			m := &mapping{b: b, ex: ex}
			m.refs.Store(1)
			return m
		}
	}
	ex.mappings.Add(-1)
	return nil
}
