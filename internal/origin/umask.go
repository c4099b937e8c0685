package origin

import (
	"bufio"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// processUmask is the umask the origin's mkdir and creat calls are
// subject to, read from /proc/self/status: asking with umask(2) would
// change it for a moment under every other goroutine. Unknown, it is
// taken as 0: nothing removed.
func processUmask() fs.FileMode {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(m) & fs.ModePerm
			}
		}
	}
	return 0
}

// madeDirMode is the mode a mkdir asking for perm gives a new directory.
func (o *Origin) madeDirMode(perm fs.FileMode) fs.FileMode { return newDirMode(perm) &^ o.umask }
