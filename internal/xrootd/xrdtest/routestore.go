// Package xrdtest holds test doubles shared by the root:// server and
// client tests.
package xrdtest

import (
	"context"
	"io/fs"
	"sync"
	"time"

	"sitebox/internal/store"
)

// RouteStore is a director in miniature: as a store.Router, Decide
// decides, call by call, whether to redirect, ask the client to wait, or
// serve from the Store underneath (which must also be a store.Namespace
// and store.SpaceReporter for those calls); every call's store.Request is
// recorded, routed or served.
type RouteStore struct {
	store.Store
	Decide func(op, name string) (store.Route, error) // nil: always serve
	Locs   []store.Location                           // Locate's answer when set

	mu   sync.Mutex
	seen []Call
}

// Call is one store call as the RouteStore saw it.
type Call struct {
	Op, Name string
	Req      *store.Request
}

// RedirectAll returns a Route sending every call to the endpoints.
func RedirectAll(to []store.Endpoint, opaque string) func(op, name string) (store.Route, error) {
	return func(op, name string) (store.Route, error) {
		return store.Route{To: to, Opaque: opaque, Reason: "test"}, nil
	}
}

// WaitAll returns a Route asking every call to wait d.
func WaitAll(d time.Duration, reason string) func(op, name string) (store.Route, error) {
	return func(op, name string) (store.Route, error) {
		return store.Route{Retry: true, Wait: d, Reason: reason}, nil
	}
}

var _ store.Router = (*RouteStore)(nil)

// Route records the call and answers with Decide. With no Decide every
// call is served, and recorded by the store method serving it.
func (r *RouteStore) Route(ctx context.Context, c store.Call) (store.Route, error) {
	r.mu.Lock()
	decide := r.Decide
	r.mu.Unlock()
	if decide == nil {
		return store.Route{}, nil
	}
	r.record(ctx, c.Op, c.Path)
	return decide(c.Op, c.Path)
}

func (r *RouteStore) record(ctx context.Context, op, name string) {
	r.mu.Lock()
	r.seen = append(r.seen, Call{op, name, store.RequestFrom(ctx)})
	r.mu.Unlock()
}

// check records a call served without a Decide.
func (r *RouteStore) check(ctx context.Context, op, name string) error {
	r.mu.Lock()
	decided := r.Decide != nil
	r.mu.Unlock()
	if !decided {
		r.record(ctx, op, name)
	}
	return nil
}

// Calls returns what was asked so far.
func (r *RouteStore) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.seen...)
}

// Last returns the most recent call of op, or nil.
func (r *RouteStore) Last(op string) *Call {
	c := r.Calls()
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Op == op {
			return &c[i]
		}
	}
	return nil
}

func (r *RouteStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	if err := r.check(ctx, "stat", name); err != nil {
		return store.FileInfo{}, err
	}
	return r.Store.Stat(ctx, name)
}

func (r *RouteStore) Open(ctx context.Context, name string) (store.File, error) {
	if err := r.check(ctx, "open", name); err != nil {
		return nil, err
	}
	return r.Store.Open(ctx, name)
}

func (r *RouteStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	if err := r.check(ctx, "list", name); err != nil {
		return nil, err
	}
	return r.Store.List(ctx, name)
}

func (r *RouteStore) Create(ctx context.Context, name string, o store.CreateOptions) (store.WritableFile, error) {
	if err := r.check(ctx, "create", name); err != nil {
		return nil, err
	}
	return store.Create(ctx, r.Store, name, o)
}

func (r *RouteStore) Checksum(ctx context.Context, name, algo string) (string, error) {
	if err := r.check(ctx, "checksum", name); err != nil {
		return "", err
	}
	return store.Checksum(ctx, r.Store, name, algo)
}

func (r *RouteStore) Locate(ctx context.Context, name string) ([]store.Location, error) {
	if err := r.check(ctx, "locate", name); err != nil {
		return nil, err
	}
	if r.Locs != nil {
		return r.Locs, nil
	}
	return store.Locate(ctx, r.Store, name)
}

// SetRoute changes the route while servers use the store.
func (r *RouteStore) SetRoute(route func(op, name string) (store.Route, error)) {
	r.mu.Lock()
	r.Decide = route
	r.mu.Unlock()
}

func (r *RouteStore) ns() store.Namespace { ns, _ := store.As[store.Namespace](r.Store); return ns }

func (r *RouteStore) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	if err := r.check(ctx, "mkdir", name); err != nil {
		return err
	}
	return r.ns().Mkdir(ctx, name, perm, parents)
}

func (r *RouteStore) Remove(ctx context.Context, name string) error {
	if err := r.check(ctx, "rm", name); err != nil {
		return err
	}
	return r.ns().Remove(ctx, name)
}

func (r *RouteStore) Rmdir(ctx context.Context, name string) error {
	if err := r.check(ctx, "rmdir", name); err != nil {
		return err
	}
	return r.ns().Rmdir(ctx, name)
}

func (r *RouteStore) Rename(ctx context.Context, from, to string) error {
	if err := r.check(ctx, "mv", from); err != nil {
		return err
	}
	return r.ns().Rename(ctx, from, to)
}

func (r *RouteStore) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	if err := r.check(ctx, "chmod", name); err != nil {
		return err
	}
	return r.ns().Chmod(ctx, name, perm)
}

func (r *RouteStore) Space(ctx context.Context, name string) (store.Space, error) {
	if err := r.check(ctx, "space", name); err != nil {
		return store.Space{}, err
	}
	sr, _ := store.As[store.SpaceReporter](r.Store)
	return sr.Space(ctx, name)
}
