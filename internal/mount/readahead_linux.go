package mount

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// setReadAhead raises the kernel's read-ahead for the mount to n bytes.
// FUSE's INIT cannot ask for more than 128 KiB, so sequential readers
// would send requests of 128–256 KiB, each a round trip to the server;
// the mount's backing device (bdi) takes a larger window, and then the
// kernel sends 1 MiB requests. Only root may write it: others keep the
// kernel's window.
func setReadAhead(dir string, n int) error {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return err
	}
	f := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	return os.WriteFile(f, []byte(strconv.Itoa(n>>10)), 0)
}
