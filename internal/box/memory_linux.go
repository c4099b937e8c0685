package box

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostMemory is the memory the box may use, in bytes: the machine's, or
// the limit of its cgroup (a systemd MemoryMax, a container) when lower;
// 0 when unknown.
func hostMemory() int64 {
	var total int64
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		total = int64(si.Totalram) * int64(si.Unit)
	}
	if lim := cgroupMemoryLimit(); lim > 0 && (total == 0 || lim < total) {
		total = lim
	}
	return total
}

// cgroupMemoryLimit is the smallest memory limit on the way from the
// process's cgroup to the root (memory.max in cgroup v2,
// memory.limit_in_bytes in v1), or 0 when none is set.
func cgroupMemoryLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	var lim int64
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		// "0::/path" (v2) or "4:memory:/path" (v1)
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var n int64
		switch {
		case parts[0] == "0" && parts[1] == "":
			n = smallestLimit("/sys/fs/cgroup", parts[2], "memory.max")
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			n = smallestLimit("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		}
		if n > 0 && (lim == 0 || n < lim) {
			lim = n
		}
	}
	return lim
}

// smallestLimit reads file in dir and each of its parents under root and
// returns the smallest number found, or 0 ("max", no limit, is skipped).
func smallestLimit(root, dir, file string) int64 {
	var lim int64
	for dir = path.Clean("/" + dir); ; dir = path.Dir(dir) {
		v, err := os.ReadFile(path.Join(root, dir, file))
		if n, perr := strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64); err == nil && perr == nil && n > 0 && (lim == 0 || n < lim) {
			lim = n
		}
		if dir == "/" {
			return lim
		}
	}
}
