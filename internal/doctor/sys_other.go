//go:build !linux

package doctor

import (
	"errors"
	"io"
	"os"
)

func statfs(path string) (FSInfo, error) {
	return FSInfo{}, &os.PathError{Op: "statfs", Path: path, Err: errors.ErrUnsupported}
}

// openDirect writes through the page cache where O_DIRECT is unknown;
// Close syncs, so the disk still does the work before the clock stops.
func openDirect(path string) (io.WriteCloser, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return syncCloser{f}, nil
}
