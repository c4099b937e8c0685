//go:build !linux

package tpc

// rangeWriter is nil where sync_file_range(2) does not exist: the disk
// writes are then left to the system (and the landing).
func rangeWriter(fd uintptr) func(off, n int64) error { return nil }
