//go:build unix

package bench

import "syscall"

// openFilesLimit is how many descriptors this process may hold (Go
// raises the soft limit to the hard one at start), 0 if unknown.
func openFilesLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}
