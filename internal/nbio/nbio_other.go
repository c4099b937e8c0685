//go:build !linux

package nbio

import (
	"errors"
	"syscall"
)

// Supported reports whether this platform has the calls below; elsewhere
// they return errors.ErrUnsupported and callers use the standard ones.
const Supported = false

func ReadResident(int, []byte, int64) (int, error) { return 0, errors.ErrUnsupported }

func Read(syscall.RawConn, []byte) (int, error) { return 0, errors.ErrUnsupported }

func Writev(syscall.RawConn, [][]byte, func()) error { return errors.ErrUnsupported }

func Resident([]byte) (bool, error) { return false, errors.ErrUnsupported }

func Cached(int, int64, int64) (bool, error) { return false, errors.ErrUnsupported }
