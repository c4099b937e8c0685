//go:build !linux

package mount

import "errors"

// setReadAhead: the window is Linux's to set (readahead_linux.go).
func setReadAhead(string, int) error { return errors.New("not on this system") }
