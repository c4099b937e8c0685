package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Name is a namespace path as a client wrote it. Path is its clean form
// (CleanPath), which every store works with; Dir and Dot keep what the
// clean form drops. By POSIX path resolution a path that ends in "/" or
// "/." names a directory or nothing: "rm f/" must not remove the file f,
// nor "PUT /f/" overwrite it. The frontends parse every path with
// ParseName and, before any operation but a mkdir, call Check (or
// CheckMove), so the rule holds whichever store (origin, cache,
// director) serves the path.
type Name struct {
	Path string
	// Dir: the path ended in "/" or "/.", so it names a directory or
	// nothing. Never set for the namespace root, a directory anyway.
	Dir bool
	// Dot: the path ended in "/.", the directory itself, which cannot be
	// removed or renamed through that name (POSIX: EINVAL).
	Dot bool
}

// ParseName cleans p (CleanPath) and records whether it was written as a
// directory. Only the end counts: "/a/./b" is "/a/b", while "/a/b/."
// names the directory b.
func ParseName(p string) (Name, error) {
	clean, err := CleanPath(p)
	if err != nil {
		return Name{}, err
	}
	dot := p == "." || strings.HasSuffix(p, "/.")
	dir := dot || strings.HasSuffix(p, "/")
	return Name{Path: clean, Dir: dir && clean != "/", Dot: dot && clean != "/"}, nil
}

// String spells the name as the client meant it: the clean path, ending
// in "/" or "/." as it was written. A redirect sends this spelling on, so
// the server that acts on it keeps the rule.
func (n Name) String() string {
	switch {
	case n.Dot:
		return n.Path + "/."
	case n.Dir:
		return n.Path + "/"
	}
	return n.Path
}

// Intent is what an operation does with the thing a name names; it
// decides what a name written as a directory allows (Name.Check).
type Intent uint8

const (
	// Inspect reads or changes what is there (stat, open, chmod,
	// checksum, attributes, listings): it must be a directory.
	Inspect Intent = iota
	// Unlink removes the name (rm, rmdir, DELETE, a rename's source): as
	// Inspect, and "/." is refused, since "." is the directory itself.
	Unlink
	// CreateFile makes or truncates a file at the name (an open with
	// kXR_new or kXR_delete, PUT, a pulled copy): a name that can only be
	// a directory can never be that file.
	CreateFile
	// Target receives a rename or a copy: nothing may be there, or a
	// directory (CheckMove adds that the source must then be one).
	Target
)

// Check enforces what the spelling of n says before op acts on it; a name
// not written as a directory passes without asking st. For one that was:
// a file there is ErrNotDir; nothing there is ErrNotFound (ErrIsDir for
// CreateFile, as open(2) answers "f/" with O_CREAT; fine for Target); a
// directory there passes, and op acts on it as on its plain name ("rm d/"
// removes an empty d, as xrootd does), unless op would unlink it through
// "d/." (ErrInvalid). The errors come in the order path resolution finds
// them, as the system calls (and xrootd) answer.
//
// st is asked with Stat, through everything the frontend serves (the
// policy, a cache, a director). A store that holds no data and answers
// Stat with ErrUnsupported (a director) cannot tell: the name passes, and
// the server it redirects to applies the rule.
func (n Name) Check(ctx context.Context, st Store, op string, in Intent) error {
	if !n.Dir {
		return nil
	}
	fi, err := st.Stat(ctx, n.Path)
	switch {
	case err == nil && fi.IsDir():
		if n.Dot && in == Unlink {
			return n.dotRefused(op)
		}
		return nil
	case err == nil:
		return &PathError{Op: op, Path: n.String(), Err: fmt.Errorf("%w: the name ends in / but names a file", ErrNotDir)}
	case errors.Is(err, ErrUnsupported):
		return nil
	case errors.Is(err, ErrNotFound):
		switch in {
		case Target:
			return nil
		case CreateFile:
			return &PathError{Op: op, Path: n.String(), Err: fmt.Errorf("%w: a name ending in / can only be a directory, never a new file", ErrIsDir)}
		}
		return &PathError{Op: op, Path: n.String(), Err: ErrNotFound}
	}
	return err
}

// CheckMove is Check for the two names of a rename (rename true: the
// source is unlinked, and neither name may end in "/.") or a copy. When
// either name is written as a directory, the source must be one: "mv f
// g/" fails with ErrNotDir and leaves f alone, as rename(2) does.
func CheckMove(ctx context.Context, st Store, op string, from, to Name, rename bool) error {
	in := Inspect
	if rename {
		in = Unlink
	}
	if err := from.Check(ctx, st, op, in); err != nil {
		return err
	}
	if err := to.Check(ctx, st, op, Target); err != nil {
		return err
	}
	if rename && to.Dot {
		return to.dotRefused(op)
	}
	if !to.Dir || from.Dir {
		return nil // a source written as a directory was checked above
	}
	fi, err := st.Stat(ctx, from.Path)
	if err == nil && !fi.IsDir() {
		return &PathError{Op: op, Path: from.Path, Err: fmt.Errorf("%w: %s names a directory and %s is a file", ErrNotDir, to, from.Path)}
	}
	return nil // anything else is for the operation itself to report
}

func (n Name) dotRefused(op string) error {
	return &PathError{Op: op, Path: n.String(), Err: fmt.Errorf("%w: a name ending in /. is the directory itself; name it without the /.", ErrInvalid)}
}
