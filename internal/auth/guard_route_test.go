package auth

import (
	"context"
	"errors"
	"testing"

	"sitebox/internal/store"
)

// countingRules counts the decisions the guard asks of its policy.
type countingRules struct {
	rules
	n int
}

func (c *countingRules) Check(r *store.Request, op, name string) error {
	c.n++
	return c.rules.Check(r, op, name)
}

func (c *countingRules) Decide(r *store.Request, op, name string) (Level, error) {
	c.n++
	return c.rules.Decide(r, op, name)
}

// countedGuard is a guard over inner whose policy decisions are counted.
func countedGuard(t *testing.T, inner store.Store) (store.Store, *countingRules) {
	t.Helper()
	g := NewGuard(inner, testPolicy(t), nil).(*guard)
	c := &countingRules{rules: g.p}
	g.p = c
	return g, c
}

// hereRouter serves every call here, as a director does for the
// directories above its servers' prefixes, and counts the questions.
type hereRouter struct {
	*memStore
	asked int
}

func (r *hereRouter) Route(ctx context.Context, c store.Call) (store.Route, error) {
	r.asked++
	return store.Route{}, nil
}

// op is one operation as a frontend runs it: routed (store.RouteOf,
// "here" without a router), then made.
type op struct {
	name string
	call store.Call
	do   func(ctx context.Context, s store.Store) error
}

var routedOps = []op{
	{"stat", store.Call{Op: "stat", Path: "/store/user/f"}, func(ctx context.Context, s store.Store) error {
		_, err := s.Stat(ctx, "/store/user/f")
		return err
	}},
	{"open", store.Call{Op: "open", Path: "/store/user/f"}, func(ctx context.Context, s store.Store) error {
		f, err := s.Open(ctx, "/store/user/f")
		if err == nil {
			f.Close()
		}
		return err
	}},
	{"list", store.Call{Op: "list", Path: "/store/user"}, func(ctx context.Context, s store.Store) error {
		_, err := s.List(ctx, "/store/user")
		return err
	}},
	{"checksum", store.Call{Op: "checksum", Path: "/store/user/f"}, func(ctx context.Context, s store.Store) error {
		_, err := store.Checksum(ctx, s, "/store/user/f", "adler32")
		return err
	}},
	{"create", store.Call{Op: "create", Path: "/store/user/new", Create: store.CreateOptions{Exclusive: true}}, func(ctx context.Context, s store.Store) error {
		w, err := store.Create(ctx, s, "/store/user/new", store.CreateOptions{Exclusive: true})
		if err == nil {
			w.Close()
		}
		return err
	}},
	{"overwrite", store.Call{Op: "create", Path: "/store/user/f", Create: store.CreateOptions{Truncate: true}}, func(ctx context.Context, s store.Store) error {
		w, err := store.Create(ctx, s, "/store/user/f", store.CreateOptions{Truncate: true})
		if err == nil {
			w.Close()
		}
		return err
	}},
}

// Every operation costs one policy decision: over a store that does not
// route (nothing asks where the call goes), over a mux of such stores
// (which offers no Router), and over a router that serves the call here
// (the decision made while routing is the operation's).
func TestOneDecisionPerOperation(t *testing.T) {
	writer := ident(nil, "read:/store/user", "modify:/store/user")
	for _, chain := range []struct {
		name   string
		inner  func() store.Store
		routes bool
	}{
		{"plain store", func() store.Store { return newMemStore("/store/user/f") }, false},
		{"mux of plain stores", func() store.Store {
			return store.NewMux(map[string]store.Store{"/store": newMemStore("/store/user/f"), "/pub": newMemStore()})
		}, false},
		{"router serving here", func() store.Store { return &hereRouter{memStore: newMemStore("/store/user/f")} }, true},
	} {
		for _, o := range routedOps {
			t.Run(chain.name+"/"+o.name, func(t *testing.T) {
				g, c := countedGuard(t, chain.inner())
				if _, routes := store.As[store.Router](g); routes != chain.routes {
					t.Fatalf("guard offers Router: %v, want %v", routes, chain.routes)
				}
				ctx := reqCtx(&store.Request{Identity: writer})
				rt, err := store.RouteOf(ctx, g, o.call)
				if err != nil || !rt.Here() {
					t.Fatalf("route: %+v, %v; want here", rt, err)
				}
				if err := o.do(ctx, g); err != nil {
					t.Fatalf("%s: %v", o.name, err)
				}
				if c.n != 1 {
					t.Errorf("%d policy decisions, want 1", c.n)
				}
			})
		}
	}
}

// A decision left while routing serves only the call it was made for:
// another path, another request or a second call is decided afresh.
func TestLeftDecisionIsForItsCallOnly(t *testing.T) {
	g, c := countedGuard(t, &hereRouter{memStore: newMemStore("/store/user/f", "/store/user/g")})
	rt, _ := store.As[store.Router](g)
	reader := &store.Request{Identity: ident(nil, "read:/store/user")}
	ctx := reqCtx(reader)
	if _, err := rt.Route(ctx, store.Call{Op: "stat", Path: "/store/user/f"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Stat(ctx, "/store/user/g"); err != nil { // another path: takes and drops it
		t.Fatal(err)
	}
	if _, err := g.Stat(ctx, "/store/user/f"); err != nil {
		t.Fatal(err)
	}
	if c.n != 3 {
		t.Errorf("%d decisions, want 3 (route, then one for each stat)", c.n)
	}

	// An anonymous request in a context derived from the reader's finds
	// nothing it could use: the decision names the reader's request.
	c.n = 0
	if _, err := rt.Route(ctx, store.Call{Op: "stat", Path: "/store/user/f"}); err != nil {
		t.Fatal(err)
	}
	anon := store.WithRequest(ctx, &store.Request{})
	if _, err := g.Stat(anon, "/store/user/f"); !errors.Is(err, store.ErrPermission) {
		t.Errorf("anonymous stat after the reader's route: %v, want a denial", err)
	}
}

// A client the policy refuses gets its refusal, never a route, and the
// router is not asked, even when it would have served the call here.
func TestRefusedClientIsNotRouted(t *testing.T) {
	for _, inner := range []interface {
		store.Store
		store.Router
	}{&hereRouter{memStore: newMemStore("/store/user/f")}, &routerStore{memStore: newMemStore("/store/user/f")}} {
		g, _ := countedGuard(t, inner)
		ctx := reqCtx(&store.Request{})
		for _, o := range routedOps {
			rt, err := store.RouteOf(ctx, g, o.call)
			if !errors.Is(err, store.ErrPermission) || len(rt.To) > 0 {
				t.Errorf("%T: %s by an anonymous client routed: %+v, %v; want a denial", inner, o.name, rt, err)
			}
		}
		asked := 0
		switch r := inner.(type) {
		case *hereRouter:
			asked = r.asked
		case *routerStore:
			asked = r.asked
		}
		if asked != 0 {
			t.Errorf("%T asked %d times for a refused client", inner, asked)
		}
	}
}

// nowhere finds nothing anywhere.
type nowhere struct{ *memStore }

func (nowhere) Route(ctx context.Context, c store.Call) (store.Route, error) {
	return store.Route{}, &store.PathError{Op: c.Op, Path: c.Path, Err: store.ErrNotFound}
}

// A change a router answers with an error is checked first: a refused
// client does not learn whether the path exists.
func TestRefusedChangeDoesNotLearnExistence(t *testing.T) {
	g, _ := countedGuard(t, nowhere{newMemStore()})
	rt, _ := store.As[store.Router](g)
	for _, o := range []string{"rm", "rmdir", "mv", "chmod", "mkdir"} {
		c := store.Call{Op: o, Path: "/store/user/f"}
		if _, err := rt.Route(reqCtx(&store.Request{}), c); !errors.Is(err, store.ErrPermission) {
			t.Errorf("%s by an anonymous client: %v, want a denial", o, err)
		}
		writer := reqCtx(&store.Request{Identity: ident(nil, "modify:/store/user")})
		if _, err := rt.Route(writer, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s by a writer: %v, want not found", o, err)
		}
	}
}
