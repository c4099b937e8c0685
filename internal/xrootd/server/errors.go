package server

import (
	"errors"
	"fmt"

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
	if code, ok := proto.StoreCodes.CodeOf(err); ok {
		return code, err.Error()
	}
	return proto.ErrServerError, err.Error()
}

// errReadOnly is the answer to changes on a read-only server.
func errReadOnly(op, path string) error {
	return errorf(proto.ErrFSReadOnly, "%s %s: this server is read-only", op, path)
}
