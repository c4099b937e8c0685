package store

import (
	"context"
	"errors"
	"fmt"
)

// User attributes of files and directories (XRootD's kXR_fattr, `xrdfs
// xattr`, `xrdcp --xattr`). Names live in their own namespace, kept
// apart from the attributes sitebox and the system keep: an origin
// stores attribute "a" as the extended attribute "user.U.a", as xrootd
// does, so files moved between the two keep theirs.

// AttrOp is what an attribute request does.
type AttrOp uint8

const (
	AttrDel  AttrOp = 0 // remove the named attributes
	AttrGet  AttrOp = 1 // read the named attributes
	AttrList AttrOp = 2 // read every attribute
	AttrSet  AttrOp = 3 // set the named attributes
)

// Changes reports whether op changes the file's attributes.
func (op AttrOp) Changes() bool { return op == AttrDel || op == AttrSet }

func (op AttrOp) String() string {
	switch op {
	case AttrDel:
		return "delxattr"
	case AttrGet:
		return "getxattr"
	case AttrList:
		return "listxattr"
	case AttrSet:
		return "setxattr"
	}
	return fmt.Sprintf("xattr op %d", op)
}

// Limits of attribute requests, XRootD's (kXR_faMaxVars, kXR_faMaxNlen,
// kXR_faMaxVlen): every frontend and store refuses more.
const (
	MaxAttrsPerRequest = 16
	MaxAttrNameLen     = 248
	MaxAttrValueLen    = 65536
	// MaxAttrsPerFile bounds the attributes one file may have, so a
	// client cannot grow a listing (and its answer) without end.
	MaxAttrsPerFile = 64
)

// ErrNoAttr is the answer for an attribute the file does not have.
var ErrNoAttr = errors.New("no such attribute")

// AttrQuery is one attribute request: Op on Attrs (names, and values for
// AttrSet; none for AttrList). Exclusive makes AttrSet fail with ErrExist
// for an attribute that is already set.
type AttrQuery struct {
	Op        AttrOp
	Attrs     []Attr
	Exclusive bool
}

// Attr is one attribute and, in an answer, the outcome for it: Err is
// nil, ErrNoAttr, ErrExist, ErrNoSpace, ….
type Attr struct {
	Name  string
	Value []byte
	Err   error
}

// Check validates q against the limits above.
func (q AttrQuery) Check() error {
	switch {
	case q.Op == AttrList && len(q.Attrs) != 0:
		return fmt.Errorf("%w: a listing names no attributes", ErrInvalid)
	case q.Op == AttrList:
		return nil
	case q.Op > AttrSet:
		return fmt.Errorf("%w: unknown attribute operation %d", ErrInvalid, q.Op)
	case len(q.Attrs) == 0 || len(q.Attrs) > MaxAttrsPerRequest:
		return fmt.Errorf("%w: %d attributes named (1 to %d per request)", ErrInvalid, len(q.Attrs), MaxAttrsPerRequest)
	}
	for _, a := range q.Attrs {
		if a.Name == "" || len(a.Name) > MaxAttrNameLen {
			return fmt.Errorf("%w: attribute name of %d bytes (1 to %d)", ErrInvalid, len(a.Name), MaxAttrNameLen)
		}
		if len(a.Value) > MaxAttrValueLen {
			return fmt.Errorf("%w: value of attribute %q has %d bytes (at most %d)", ErrInvalid, a.Name, len(a.Value), MaxAttrValueLen)
		}
	}
	return nil
}

// Attributer is implemented by stores that keep user attributes.
type Attributer interface {
	// Attrs does q on the file or directory name and answers each
	// attribute's outcome (for AttrList: every attribute with its value).
	// An error is the answer for the whole request: the file does not
	// exist, the caller may not, the export is read-only.
	Attrs(ctx context.Context, name string, q AttrQuery) ([]Attr, error)
}

// AttrFile is implemented by open files whose attributes can be reached
// through the file itself (an upload sets the attributes of the file it
// writes, whatever name it will have). Opening the file was the access
// check; the caller refuses changes through a file opened for reading.
type AttrFile interface {
	Attrs(q AttrQuery) ([]Attr, error)
}

// Attrs does q on name in s with its Attributer; a store without one
// keeps no attributes: changes are refused as read-only, reads as
// unsupported.
func Attrs(ctx context.Context, s Store, name string, q AttrQuery) ([]Attr, error) {
	if err := q.Check(); err != nil {
		return nil, &PathError{Op: q.Op.String(), Path: name, Err: err}
	}
	a, ok := As[Attributer](s)
	if !ok {
		return nil, noAttrs(q.Op, name)
	}
	return a.Attrs(ctx, name, q)
}

// FileAttrs does q on the open file f, if it keeps attributes.
func FileAttrs(f File, name string, q AttrQuery) ([]Attr, error) {
	if err := q.Check(); err != nil {
		return nil, &PathError{Op: q.Op.String(), Path: name, Err: err}
	}
	a, ok := f.(AttrFile)
	if !ok {
		return nil, noAttrs(q.Op, name)
	}
	return a.Attrs(q)
}

func noAttrs(op AttrOp, name string) error {
	if op.Changes() {
		return &PathError{Op: op.String(), Path: name, Err: fmt.Errorf("%w: attributes cannot be changed here (only an origin keeps them)", ErrReadOnly)}
	}
	return &PathError{Op: op.String(), Path: name, Err: fmt.Errorf("%w: attributes are kept by the origin, not here", ErrUnsupported)}
}
