package jobs

import (
	"runtime"

	"golang.org/x/sys/unix"
)

func numCPU() int { return runtime.NumCPU() }

func totalMemoryMB() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 4096
	}
	return int64(si.Totalram) * int64(si.Unit) >> 20
}
