package dio

import (
	"os"
	"strconv"

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
