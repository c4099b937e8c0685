package dio

import (
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reopen opens the file behind the descriptor fd again for writing with
// O_DIRECT: a second descriptor of the same inode (through /proc, so no
// name is looked up again), whose writes bypass the page cache while
// fd's go through it. Filesystems without O_DIRECT (tmpfs, some network
// ones) refuse it with EINVAL.
func Reopen(fd uintptr) (*os.File, error) {
	p := "/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10)
	nfd, err := unix.Open(p, unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "reopen", Path: p, Err: err}
	}
	return os.NewFile(uintptr(nfd), p), nil
}

// OnLocalDisk reports whether the file behind fd lives on a filesystem
// of a local disk whose O_DIRECT writes go straight to the device (ext4,
// XFS, btrfs). On a network filesystem (NFS, CephFS, Lustre) an O_DIRECT
// write is a synchronous round trip to the server each, where buffered
// writes keep many in flight; elsewhere O_DIRECT may be ignored or
// refused.
func OnLocalDisk(fd uintptr) bool {
	var st unix.Statfs_t
	if unix.Fstatfs(int(fd), &st) != nil {
		return false
	}
	switch st.Type {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC:
		return true
	}
	return false
}

// Resident is the fraction of f's pages the page cache holds (mincore),
// for checking that writes went past it.
func Resident(f *os.File) (float64, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0, err
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, err
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, e
	}
	in := 0
	for _, v := range vec {
		in += int(v & 1)
	}
	return float64(in) / float64(len(vec)), nil
}
