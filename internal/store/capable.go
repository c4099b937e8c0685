package store

import (
	"context"
	"fmt"
)

// Capable is implemented by a store that wraps another and decides which
// of the inner store's capabilities it offers. As reports whether the
// wrapper offers the capability target points to (a *Creator, a
// *Namespace, …) and, if so, sets *target to a view that does what the
// wrapper must before reaching the inner store. The outermost wrapper
// answers for all: As never looks past it, as errors.As looks at the
// outermost error first and net/http's ResponseController asks the
// outermost writer.
type Capable interface {
	As(target any) bool
}

// As finds capability T (one of the optional interfaces) of s: through
// s's own As when s is Capable, else by type assertion.
func As[T any](s Store) (T, bool) {
	if c, ok := s.(Capable); ok {
		var t T
		ok := c.As(&t)
		return t, ok
	}
	t, ok := s.(T)
	return t, ok
}

// Offer is the usual body of a wrapper's As for one capability: when
// target is a *T and inner has T, it sets *target to view (the wrapper's
// own implementation) and reports true. A wrapper thus offers exactly
// its inner store's capabilities.
func Offer[T any](inner Store, target any, view T) bool {
	t, ok := target.(*T)
	if !ok {
		return false
	}
	if _, has := As[T](inner); !has {
		return false
	}
	*t = view
	return true
}

// Create creates name in s with its Creator, as io/fs's helpers use an
// optional interface: without one the answer is ErrReadOnly.
func Create(ctx context.Context, s Store, name string, opts CreateOptions) (WritableFile, error) {
	c, ok := As[Creator](s)
	if !ok {
		return nil, &PathError{Op: "create", Path: name, Err: fmt.Errorf("%w: this server does not take uploads", ErrReadOnly)}
	}
	return c.Create(ctx, name, opts)
}

// Checksum asks s's Checksummer for the digest of name; without one the
// answer is ErrUnsupported.
func Checksum(ctx context.Context, s Store, name, algo string) (string, error) {
	c, ok := As[Checksummer](s)
	if !ok {
		return "", &PathError{Op: "checksum", Path: name, Err: ErrUnsupported}
	}
	return c.Checksum(ctx, name, algo)
}

// Locate asks s's Locator who holds name; a store without one holds what
// it serves, so the answer is "here".
func Locate(ctx context.Context, s Store, name string) ([]Location, error) {
	l, ok := As[Locator](s)
	if !ok {
		fi, err := s.Stat(ctx, name)
		if err != nil {
			return nil, err
		}
		return []Location{{Writable: fi.Writable}}, nil
	}
	return l.Locate(ctx, name)
}
