package upstream

import (
	"context"
	"errors"
	"fmt"

	"sitebox/internal/store"
)

// Stat asks the route's servers about p, in order, until one answers.
func (r *Route) Stat(ctx context.Context, p string) (store.FileInfo, error) {
	return r.statOf(ctx, r.servers, nil, p)
}

// List lists the directory p at the first server that answers.
func (r *Route) List(ctx context.Context, p string) (fis []store.FileInfo, err error) {
	err = r.each(ctx, p, func(ctx context.Context, u *Server, name string) error {
		var e error
		fis, e = u.Streams[0].List(ctx, name)
		return e
	})
	return fis, err
}

// Checksum asks the first server that answers for p's checksum.
func (r *Route) Checksum(ctx context.Context, p, algo string) (sum string, err error) {
	err = r.each(ctx, p, func(ctx context.Context, u *Server, name string) error {
		var e error
		sum, e = store.Checksum(ctx, u.Streams[0], name, algo)
		return e
	})
	return sum, err
}

// Attrs asks the first server that answers for p's user attributes.
func (r *Route) Attrs(ctx context.Context, p string, q store.AttrQuery) (attrs []store.Attr, err error) {
	err = r.each(ctx, p, func(ctx context.Context, u *Server, name string) error {
		var e error
		attrs, e = store.Attrs(ctx, u.Streams[0], name, q)
		return e
	})
	return attrs, err
}

// each runs op against each server in order until one succeeds, with the
// context and the name of p that server takes. If all fail, the error of
// the first server that had the file wins over "not found" from the
// others, so a transient failure is not reported as a missing file.
func (r *Route) each(ctx context.Context, p string, op func(ctx context.Context, u *Server, name string) error) error {
	vo := store.RequestFrom(ctx).ClientVO()
	return r.eachOf(ctx, r.servers, nil, func(u *Server) error {
		return op(upCtx(ctx, u, vo), u, r.upPath(u, p))
	})
}

// eachOf is each over ups, after the errors errs of servers asked before
// them.
func (r *Route) eachOf(ctx context.Context, ups []*Server, errs []error, op func(u *Server) error) error {
	for _, u := range ups {
		err := op(u)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, r.set.failed(u, err))
	}
	for _, err := range errs {
		if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return errs[0]
}

// failed counts and logs a failure of u that is not an answer about the
// file (a cut, a timeout) and marks it unavailable.
func (s *Set) failed(u *Server, err error) error {
	if store.IsAnswer(err) {
		return err
	}
	s.errors.Add(1)
	s.opts.Log.Warn("upstream failed", "upstream", u.Name, "err", err)
	return fmt.Errorf("%w: %s: %w", store.ErrUnavailable, u.Name, err)
}

// statOf stats p at ups, after the errors errs of servers asked before.
func (r *Route) statOf(ctx context.Context, ups []*Server, errs []error, p string) (fi store.FileInfo, err error) {
	vo := store.RequestFrom(ctx).ClientVO()
	err = r.eachOf(ctx, ups, errs, func(u *Server) error {
		var e error
		fi, e = u.Streams[0].Stat(upCtx(ctx, u, vo), r.upPath(u, p))
		return e
	})
	return fi, err
}
