package auth

import (
	"context"
	"errors"

	"sitebox/internal/store"
)

// Route checks the call as the call itself would be checked before a
// router says where it is served: a client the policy refuses is refused
// here, and learns nothing about where files are. It is offered only
// over a store that routes. A call served here finds the decision left
// for it (routeHere): one policy decision per operation.
func (g *guard) Route(ctx context.Context, c store.Call) (store.Route, error) {
	rt, ok := store.As[store.Router](g.inner)
	if !ok {
		return store.Route{}, nil
	}
	switch c.Op {
	case "create":
		return g.routeCreate(ctx, rt, c)
	case "mkdir", "rm", "rmdir", "mv", "chmod", "setxattr", "delxattr":
		return g.routeChange(ctx, rt, c)
	}
	if err := g.check(ctx, c.Op, store.ScopeRead, c.Path); err != nil {
		return store.Route{}, err
	}
	return g.routeHere(ctx, rt, c, store.ScopeRead)
}

// routeHere asks the router about c, which the policy allows scope on,
// and leaves that decision for the call that follows when it is served
// here.
func (g *guard) routeHere(ctx context.Context, rt store.Router, c store.Call, scope string) (store.Route, error) {
	route, err := rt.Route(ctx, c)
	if err == nil && route.Here() {
		store.Leave(ctx, decided{g, store.RequestFrom(ctx), scope, c.Path})
	}
	return route, err
}

// routeChange checks a namespace change that a router sends elsewhere,
// or answers with an error (the change served here is checked when it
// is made, by the rules of its own method): mkdir needs storage.create,
// the others storage.modify. A refused client thus learns neither where
// the path is nor whether it exists.
func (g *guard) routeChange(ctx context.Context, rt store.Router, c store.Call) (store.Route, error) {
	route, err := rt.Route(ctx, c)
	if err == nil && route.Here() {
		return route, nil
	}
	scope := store.ScopeModify
	if c.Op == "mkdir" {
		scope = store.ScopeCreate
	}
	if err := g.check(ctx, c.Op, scope, c.Path); err != nil {
		return store.Route{}, err
	}
	return route, err
}

// routeCreate checks an upload as Create does: an exclusive one needs
// storage.create, one that may change an existing file storage.modify,
// unless the file is certainly new, which a router tells by not finding
// it anywhere (a router that serves the path here leaves the check to
// the Create that follows).
func (g *guard) routeCreate(ctx context.Context, rt store.Router, c store.Call) (store.Route, error) {
	r := store.RequestFrom(ctx)
	if c.Create.Exclusive {
		if err := g.p.Check(r, store.ScopeCreate, c.Path); err != nil {
			return store.Route{}, g.denied(ctx, "create", c.Path, err)
		}
		return g.routeHere(ctx, rt, c, store.ScopeCreate)
	}
	modErr := g.p.Check(r, store.ScopeModify, c.Path)
	if modErr == nil {
		return g.routeHere(ctx, rt, c, store.ScopeModify)
	}
	if c.Create.Update { // only ever changes an existing file
		return store.Route{}, g.denied(ctx, "create", c.Path, modErr)
	}
	if err := g.p.Check(r, store.ScopeCreate, c.Path); err != nil {
		return store.Route{}, g.denied(ctx, "create", c.Path, err)
	}
	st, err := rt.Route(ctx, store.Call{Op: "stat", Path: c.Path})
	switch {
	case err == nil && st.Here():
		return rt.Route(ctx, c)
	case !errors.Is(err, store.ErrNotFound):
		return store.Route{}, g.denied(ctx, "create", c.Path, modErr)
	}
	c.Create.Exclusive, c.Create.Truncate = true, false
	return rt.Route(ctx, c)
}
