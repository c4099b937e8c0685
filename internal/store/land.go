package store

import (
	"context"
	"errors"
	"strings"
)

// Lander is implemented by a file Create made new for the request that
// holds it, as an upload's temporary: Land renames it to final once all
// of it arrived. The request needs no right on the temporary's name
// beyond having created it (the file is the proof), and on final what
// writing a file there needs. It may be called after Close.
type Lander interface {
	Land(ctx context.Context, final string) error
}

// Land gives the file f that Create returned for tmp the name final:
// through f's own Land when it has one, else with ns.Rename. Errors
// speak of final, never of tmp (see Renamed).
func Land(ctx context.Context, f File, ns Namespace, tmp, final string) error {
	if l, ok := f.(Lander); ok {
		if err := l.Land(ctx, final); !errors.Is(err, errors.ErrUnsupported) {
			return Renamed(err, "", tmp, final)
		}
	}
	return Renamed(ns.Rename(ctx, tmp, final), "", tmp, final)
}

// Renamed makes an error about an upload's temporary tmp speak of name,
// the path the client asked for: the path of its PathError (with the
// operation op, if given) and every mention of tmp in its text (a
// refusal names the path it checked). Clients never see internal names.
func Renamed(err error, op, tmp, name string) error {
	if err == nil || tmp == "" || tmp == name {
		return err
	}
	var pe *PathError
	if errors.As(err, &pe) && pe.Path == tmp {
		if op == "" {
			op = pe.Op
		}
		return &PathError{Op: op, Path: name, Err: renamedText(pe.Err, tmp, name)}
	}
	return renamedText(err, tmp, name)
}

func renamedText(err error, tmp, name string) error {
	if !strings.Contains(err.Error(), tmp) {
		return err
	}
	return &renamedError{err: err, text: strings.ReplaceAll(err.Error(), tmp, name)}
}

// renamedError is err with the temporary's name replaced in its text; it
// unwraps to err, so the sentinels still classify it.
type renamedError struct {
	err  error
	text string
}

func (e *renamedError) Error() string { return e.text }
func (e *renamedError) Unwrap() error { return e.err }
