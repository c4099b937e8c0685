package store

import (
	"context"
	"fmt"

	"sitebox/internal/dio"
)

// Capable is implemented by a store (or an open file) that wraps another
// and decides which of the inner one's capabilities it offers. As reports
// whether the wrapper offers the capability target points to (a
// *Creator, a *Namespace, a *Lender, …) and, if so, sets *target to a
// view that does what the wrapper must before reaching the inner one.
// The outermost wrapper answers for all: As never looks past it, as
// errors.As looks at the outermost error first and net/http's
// ResponseController asks the outermost writer.
type Capable interface {
	As(target any) bool
}

// As finds capability T (one of the optional interfaces) of a store or
// an open file x: through x's own As when x is Capable, else by type
// assertion.
func As[T any](x any) (T, bool) {
	if c, ok := x.(Capable); ok {
		var t T
		ok := c.As(&t)
		return t, ok
	}
	t, ok := x.(T)
	return t, ok
}

// Offer is the usual body of a wrapper's As for one capability: when
// target is a *T and inner (a store or a file) has T, it sets *target to
// view (the wrapper's own implementation) and reports true. A wrapper
// thus offers exactly its inner one's capabilities.
func Offer[T any](inner any, target any, view T) bool {
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

// DirectWriter returns a writer of f's aligned pieces past the page
// cache (dio.Writer): nil unless f is a file on a local disk (SendFiler)
// whose filesystem takes O_DIRECT. The caller closes it before f.
func DirectWriter(f WritableFile) *dio.Writer {
	sf, ok := As[SendFiler](f)
	if !ok {
		return nil
	}
	return dio.NewWriter(sf.Fd())
}
