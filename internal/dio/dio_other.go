//go:build !linux

package dio

import (
	"errors"
	"os"
)

// Reopen is Linux's; elsewhere writes go through the page cache.
func Reopen(fd uintptr) (*os.File, error) {
	return nil, errors.ErrUnsupported
}

// OnLocalDisk is Linux's; elsewhere no disk is known to be one.
func OnLocalDisk(fd uintptr) bool { return false }
