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
