package store

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors every backend wraps so the frontends can translate them to
// kXR error codes and HTTP statuses with one table each (Codes). The fs ones keep
// errors.Is(err, fs.ErrNotExist) working for callers that use the standard
// library's vocabulary.
var (
	ErrNotFound    = fs.ErrNotExist
	ErrExist       = fs.ErrExist
	ErrPermission  = fs.ErrPermission // not allowed by policy or mode
	ErrInvalid     = fs.ErrInvalid    // bad path or argument
	ErrIsDir       = errors.New("is a directory")
	ErrNotDir      = errors.New("not a directory")
	ErrNotEmpty    = errors.New("directory not empty")
	ErrReadOnly    = errors.New("export is read-only")
	ErrNoSpace     = errors.New("no space left on storage")
	ErrUnsupported = errors.New("operation not supported")
	ErrIO          = errors.New("i/o error")
	ErrBusy        = errors.New("in use") // e.g. evicting a cached file a client has open
	// ErrUnavailable: the server this store relies on (a cache's upstream)
	// could not be reached or did not answer in time.
	ErrUnavailable = errors.New("upstream unavailable")
	// ErrDown: the only servers that may hold the data are down or in
	// planned downtime (a director's answer, naming them); wrapped
	// together with ErrUnavailable. Its text is meant for the client.
	ErrDown = errors.New("server down")
	// ErrInsecure: the namespace needs a protected connection (TLS, or
	// checksummed transfers); wrapped together with ErrPermission, so a
	// frontend can tell "use TLS" from "show a token".
	ErrInsecure = errors.New("needs a protected connection")
	// ErrNoToken: the request needs a bearer token and came without one;
	// wrapped together with ErrPermission, so a frontend can point the
	// client at how to send one.
	ErrNoToken = errors.New("no token")
	// ErrNameTooLong: a path element longer than MaxNameLen or a path
	// longer than MaxPathLen (ENAMETOOLONG); an ErrInvalid too, so a
	// frontend without a code of its own for it answers "bad argument".
	ErrNameTooLong = fmt.Errorf("%w: name too long", ErrInvalid)
)

// IsAnswer reports whether err is a definite answer about the request (not
// found, not allowed, ...) rather than a failure to get one, so a proxy
// passes it on instead of reporting its upstream unavailable.
func IsAnswer(err error) bool {
	for _, s := range []error{ErrNotFound, ErrExist, ErrPermission, ErrInvalid, ErrIsDir, ErrNotDir,
		ErrNotEmpty, ErrReadOnly, ErrNoSpace, ErrUnsupported, ErrBusy, ErrLocked, ErrNoAttr} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// PathError records an operation, the namespace path and the underlying
// error. Its message never contains a disk path, so it can be sent to
// clients as is.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap lets errors.Is see the sentinel.
func (e *PathError) Unwrap() error { return e.Err }
