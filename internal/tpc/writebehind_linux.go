package tpc

import "golang.org/x/sys/unix"

// rangeWriter starts the disk writes of a range of fd's file without
// waiting for them.
func rangeWriter(fd uintptr) func(off, n int64) error {
	return func(off, n int64) error {
		return unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}
}
