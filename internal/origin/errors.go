package origin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"sitebox/internal/store"
	"sitebox/internal/store/errno"
)

// wrap turns an OS error into a store.PathError naming the namespace path
// (never the disk path) and wrapping the store sentinel that matches, so the
// frontends can pick protocol codes without knowing about errno.
func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var la *linkAt
	if errors.As(err, &la) {
		return &store.PathError{Op: op, Path: name, Err: linkError(name, la)}
	}
	return &store.PathError{Op: op, Path: name, Err: classify(err)}
}

func classify(err error) error {
	var se *store.PathError
	if errors.As(err, &se) {
		return se.Err
	}
	for _, sentinel := range sentinels {
		if errors.Is(err, sentinel) && !isOSError(err) {
			return err
		}
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		if s := errno.StoreCodes.ErrOf(en); s != nil {
			if note := errnoNote(en); note != "" {
				return fmt.Errorf("%w: %s", s, note)
			}
			return s
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return store.ErrNotFound
	case errors.Is(err, fs.ErrExist):
		return store.ErrExist
	case errors.Is(err, fs.ErrPermission):
		return store.ErrPermission
	case strings.Contains(err.Error(), "escapes from parent"),
		strings.Contains(err.Error(), "path escapes"):
		// os.Root refuses symlinks that leave the pool; its error is not
		// exported, so it is recognised by text.
		return fmt.Errorf("%w: path leads outside the export", store.ErrPermission)
	}
	return fmt.Errorf("%w: %v", store.ErrIO, stripDiskPath(err))
}

// errnoNote is what an errno adds to its sentinel's message, where the
// sentinel alone would mislead.
func errnoNote(en syscall.Errno) string {
	switch en {
	case syscall.ENOTDIR:
		return "a path element is a file"
	case syscall.ELOOP:
		return "too many symbolic links"
	case syscall.EINVAL:
		return en.Error()
	case syscall.EXDEV:
		return "cannot move across storage pools"
	}
	return ""
}

// stripDiskPath keeps only the innermost error text, which never contains
// the pool directory.
func stripDiskPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

var sentinels = []error{
	store.ErrReadOnly, store.ErrIsDir, store.ErrNotDir, store.ErrNotEmpty,
	store.ErrNoSpace, store.ErrUnsupported, store.ErrIO, store.ErrExist,
	store.ErrNotFound, store.ErrPermission, store.ErrInvalid,
}

// isOSError reports errors straight from the OS, whose text may name a disk
// path and must be reduced to a sentinel.
func isOSError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}
