package nbio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether this platform has the calls below; elsewhere
// they return errors.ErrUnsupported and callers use the standard ones.
const Supported = true

// ReadResident reads len(p) bytes at off from the file fd if the page
// cache holds them (preadv2 with RWF_NOWAIT). n is how many it read; err
// is ErrNotResident when it stopped short because the rest would wait for
// the disk, io.EOF at the end of the file, errors.ErrUnsupported when the
// kernel or filesystem cannot tell, else the system call's error.
func ReadResident(fd int, p []byte, off int64) (n int, err error) {
	for n < len(p) {
		iov := unix.Iovec{Base: unsafe.SliceData(p[n:])}
		iov.SetLen(len(p) - n)
		// The offset's high word is zero on 64-bit kernels.
		r, _, e := syscall.RawSyscall6(unix.SYS_PREADV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, uintptr(off+int64(n)), 0, unix.RWF_NOWAIT)
		switch {
		case e == unix.EINTR:
			continue
		case e == unix.EAGAIN:
			return n, ErrNotResident
		case e == unix.EOPNOTSUPP || e == unix.ENOSYS || e == unix.EINVAL:
			return n, errors.ErrUnsupported
		case e != 0:
			return n, os.NewSyscallError("preadv2", e)
		case r == 0:
			return n, io.EOF
		}
		n += int(r)
	}
	return n, nil
}

// Read reads into p from the non-blocking socket behind rc, waiting in
// the network poller (and so under the connection's read deadline) while
// there is nothing to read. It returns io.EOF when the peer has closed.
func Read(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var opErr error
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
			switch e {
			case 0:
				n = int(r)
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			default:
				opErr = os.NewSyscallError("read", e)
			}
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case opErr != nil:
		return 0, opErr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Writev writes all of parts to the non-blocking socket behind rc in as
// few writev calls as the socket takes, waiting in the poller (under the
// connection's write deadline) while it is full. progress, if not nil, is
// called after each call that moved bytes, so a caller can extend the
// deadline for a slow reader that keeps reading.
func Writev(rc syscall.RawConn, parts [][]byte, progress func()) error {
	// Room for a vector read's answer of 16 segments, each lent (a
	// header, then the segment), without growing.
	var small [40]unix.Iovec
	iov := small[:0]
	for _, p := range parts {
		if len(p) > 0 {
			v := unix.Iovec{Base: unsafe.SliceData(p)}
			v.SetLen(len(p))
			iov = append(iov, v)
		}
	}
	var opErr error
	err := rc.Write(func(fd uintptr) bool {
		for len(iov) > 0 {
			// Linux takes at most IOV_MAX (1024) vectors per call.
			cnt := min(len(iov), 1024)
			r, _, e := syscall.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(cnt))
			switch e {
			case 0:
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false
			default:
				opErr = os.NewSyscallError("writev", e)
				return true
			}
			iov = advance(iov, uint64(r))
			if progress != nil && r > 0 {
				progress()
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return opErr
}

// advance drops the first n bytes from iov.
func advance(iov []unix.Iovec, n uint64) []unix.Iovec {
	for n > 0 && len(iov) > 0 {
		if n < iov[0].Len {
			iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
			iov[0].Len -= n
			return iov
		}
		n -= iov[0].Len
		iov = iov[1:]
	}
	return iov
}

// Resident reports whether every page of mem, a mapping of a file, is in
// the page cache (mincore), so that touching it will not wait for the
// disk. mem must begin on a page boundary.
func Resident(mem []byte) (bool, error) {
	page := os.Getpagesize()
	var vec [64]byte // residency of up to 64 pages per call
	for len(mem) > 0 {
		pages := min((len(mem)+page-1)/page, len(vec))
		n := min(len(mem), pages*page)
		_, _, e := syscall.RawSyscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(mem))), uintptr(n), uintptr(unsafe.Pointer(&vec[0])))
		switch e {
		case 0:
		case unix.EAGAIN:
			continue
		case unix.ENOSYS:
			return false, errors.ErrUnsupported
		default:
			return false, os.NewSyscallError("mincore", e)
		}
		for _, v := range vec[:pages] {
			if v&1 == 0 {
				return false, nil
			}
		}
		mem = mem[n:]
	}
	return true, nil
}

// Cached reports whether the page cache holds every page of the n bytes
// at off of the file fd (cachestat, Linux 6.5 and later; elsewhere
// errors.ErrUnsupported).
func Cached(fd int, off, n int64) (bool, error) {
	rng := unix.CachestatRange{Off: uint64(off), Len: uint64(n)}
	var st unix.Cachestat_t
	for {
		_, _, e := syscall.RawSyscall6(unix.SYS_CACHESTAT, uintptr(fd), uintptr(unsafe.Pointer(&rng)), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.ENOSYS, unix.EOPNOTSUPP:
			return false, errors.ErrUnsupported
		default:
			return false, os.NewSyscallError("cachestat", e)
		}
		page := uint64(os.Getpagesize())
		pages := (uint64(off)+uint64(n)+page-1)/page - uint64(off)/page
		return st.Cache >= pages, nil
	}
}
