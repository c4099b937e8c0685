package peers

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS returns the process's resident memory now (VmRSS) in bytes, for
// sampling over a run; PeakRSS gives the high-water mark.
func (p *Process) RSS() (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("pid %d: VmRSS not found", p.Cmd.Process.Pid)
}
