package local

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// pageSize converts /proc statm pages to bytes.
var pageSize = int64(os.Getpagesize())

// procStat returns the fields of /proc/<pid>/stat after the command
// name, which may hold spaces and parentheses: state is f[0], ppid f[1],
// pgrp f[2], starttime f[19], rss f[21].
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// procGroupRSS reads a process's group and resident memory from /proc.
func procGroupRSS(pid int) (pgid int, rss int64, ok bool) {
	f, ok := procStat(pid)
	if !ok || len(f) < 22 {
		return 0, 0, false
	}
	return atoiOr(f[2], -1), int64(atoiOr(f[21], 0)) * pageSize, true
}

// procStart is a process's start time in clock ticks since boot, which
// with its pid identifies it across pid reuse.
func procStart(pid int) (int64, bool) {
	f, ok := procStat(pid)
	if !ok || len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[19], 10, 64)
	return n, err == nil
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// owner is the uid that owns a file.
func owner(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return ^uint32(0)
}

// ProcOfUID reports whether a process is alive (not a zombie) and has
// uid as its real, effective or saved user: one a slot user could still
// signal, and one that kill(-1) as that user reaches.
func ProcOfUID(pid int, uid uint32) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	want := strconv.FormatUint(uint64(uid), 10)
	mine, zombie := false, false
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		switch {
		case k == "State" && len(f) > 0:
			zombie = f[0] == "Z" || f[0] == "X"
		case k == "Uid" && len(f) >= 3:
			mine = f[0] == want || f[1] == want || f[2] == want
		}
	}
	return mine && !zombie
}

// eachProcOfUID calls fn for every live process of uid but skip.
func eachProcOfUID(uid uint32, skip int, fn func(pid int)) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid := atoiOr(e.Name(), -1)
		if pid > 0 && pid != skip && ProcOfUID(pid, uid) {
			fn(pid)
		}
	}
}
