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
