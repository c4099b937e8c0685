package peers

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
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

// OwnRSS returns the process's resident memory of its own now: anonymous
// and shared-memory pages (RssAnon + RssShmem), without the pages of
// files it maps (RssFile). A server that lends page-cache pages of a
// mapped file to its writev has them counted in VmRSS, though they are
// the kernel's page cache, there with or without the mapping (a server
// reading with pread holds the same pages, uncounted).
func (p *Process) OwnRSS() (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/status")
	if err != nil {
		return 0, err
	}
	var sum int64
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		for _, key := range []string{"RssAnon:", "RssShmem:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				if err != nil {
					return 0, err
				}
				sum += kb << 10
				found++
			}
		}
	}
	if found != 2 {
		return 0, fmt.Errorf("pid %d: RssAnon or RssShmem not found", p.Cmd.Process.Pid)
	}
	return sum, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go runs on.
const clockTicks = 100

// CPUTime is the CPU time (user + system, all threads) the process has
// used so far, from /proc/<pid>/stat, for charging work to a server.
func (p *Process) CPUTime() (time.Duration, error) {
	f, err := procStat("/proc/" + strconv.Itoa(p.Cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("pid %d: %w", p.Cmd.Process.Pid, err)
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("pid %d: short stat", p.Cmd.Process.Pid)
	}
	// After ')': state(0) ... utime(11) stime(12).
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("pid %d: bad cpu times in stat", p.Cmd.Process.Pid)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// procStat returns the fields of procDir/stat after the command name,
// which may hold spaces and parentheses: state is [0], ppid [1], and so
// on (proc(5) numbering minus 3).
func procStat(procDir string) ([]string, error) {
	b, err := os.ReadFile(procDir + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, errors.New("malformed stat")
	}
	return strings.Fields(string(b[i+1:])), nil
}
