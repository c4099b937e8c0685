package server

import (
	"context"
	"errors"
	"fmt"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// xrdError is an error that already knows its kXR code: protocol-level
// problems found by the server itself.
type xrdError struct {
	code int32
	msg  string
}

func (e *xrdError) Error() string { return e.msg }

func errorf(code int32, format string, args ...any) error {
	return &xrdError{code: code, msg: fmt.Sprintf(format, args...)}
}

// toXrd is the one place errors become kXR error codes and messages. Store
// errors carry namespace paths only, so their text can go to the client.
func toXrd(err error) (int32, string) {
	var xe *xrdError
	if errors.As(err, &xe) {
		return xe.code, xe.msg
	}
	var le *limitError
	if errors.As(err, &le) {
		return le.code(), err.Error()
	}
	msg := err.Error()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return proto.ErrNotFound, msg
	case errors.Is(err, store.ErrNoAttr):
		return proto.ErrAttrNotFound, msg
	case errors.Is(err, store.ErrLocked):
		return proto.ErrFileLocked, msg
	case errors.Is(err, store.ErrReadOnly):
		return proto.ErrFSReadOnly, msg
	case errors.Is(err, store.ErrPermission):
		return proto.ErrNotAuthorized, msg
	case errors.Is(err, store.ErrIsDir):
		return proto.ErrIsDirectory, msg
	case errors.Is(err, store.ErrExist):
		return proto.ErrItExists, msg
	case errors.Is(err, store.ErrNoSpace):
		return proto.ErrNoSpace, msg
	case errors.Is(err, cksum.ErrUnknownAlgorithm), errors.Is(err, store.ErrUnsupported):
		return proto.ErrUnsupported, msg
	case errors.Is(err, store.ErrNameTooLong):
		return proto.ErrArgTooLong, msg // ENAMETOOLONG in XRootD's mapping
	case errors.Is(err, store.ErrInvalid):
		return proto.ErrArgInvalid, msg
	case errors.Is(err, store.ErrNotDir), errors.Is(err, store.ErrNotEmpty):
		return proto.ErrFSError, msg // ENOTDIR, ENOTEMPTY in XRootD's mapping
	case errors.Is(err, store.ErrIO):
		return proto.ErrIOError, msg
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return proto.ErrCancelled, msg
	}
	return proto.ErrServerError, msg
}

// errReadOnly is the answer to changes on a read-only server.
func errReadOnly(op, path string) error {
	return errorf(proto.ErrFSReadOnly, "%s %s: this server is read-only", op, path)
}
