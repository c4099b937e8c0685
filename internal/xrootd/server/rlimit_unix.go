//go:build unix

package server

import "syscall"

// descriptorLimit is how many descriptors the process may open (the soft
// RLIMIT_NOFILE, which Go raises to the hard limit at start), or 0.
func descriptorLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
