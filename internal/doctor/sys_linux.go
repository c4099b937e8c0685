package doctor

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

func statfs(path string) (FSInfo, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return FSInfo{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	bs := uint64(st.Bsize)
	return FSInfo{Total: st.Blocks * bs, Avail: st.Bavail * bs, Files: st.Files, FilesFree: st.Ffree}, nil
}

// openDirect opens path for writing past the page cache, so the disk
// test measures the disk and not RAM — the way the cache writes by
// default. Filesystems without O_DIRECT (tmpfs, some network ones) refuse
// it with EINVAL; those are written through the page cache and synced on
// Close instead, which still makes the disk do the work before the clock
// stops.
func openDirect(path string) (io.WriteCloser, error) {
	const flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	f, err := os.OpenFile(path, flags|unix.O_DIRECT, 0o600)
	if errors.Is(err, unix.EINVAL) {
		f, err = os.OpenFile(path, flags, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return syncCloser{f}, nil
}
