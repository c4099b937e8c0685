package jobs

import (
	"os"
	"strconv"
	"strings"
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
