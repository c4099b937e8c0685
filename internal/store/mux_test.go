package store

import (
	"context"
	"testing"
)

// router is a plain store that routes everything elsewhere and counts
// what it was asked.
type router struct {
	plain
	asked []string
}

func (r *router) Route(ctx context.Context, c Call) (Route, error) {
	r.asked = append(r.asked, c.Path)
	return Route{To: []Endpoint{{Root: "elsewhere:1094"}}}, nil
}

func TestMuxOffersRouterOnlyWhenAMountRoutes(t *testing.T) {
	ctx := context.Background()
	plainMux := NewMux(map[string]Store{"/a": plain{}, "/b": located{}})
	if _, ok := As[Router](plainMux); ok {
		t.Fatal("a mux of stores that do not route offers Router")
	}
	if rt, err := RouteOf(ctx, plainMux, Call{Op: "stat", Path: "/a/f"}); err != nil || !rt.Here() {
		t.Errorf("RouteOf on a plain mux = %+v, %v; want here", rt, err)
	}
	for name, ok := range map[string]bool{
		"Creator":       has[Creator](plainMux),
		"Checksummer":   has[Checksummer](plainMux),
		"Locator":       has[Locator](plainMux),
		"Namespace":     has[Namespace](plainMux),
		"SpaceReporter": has[SpaceReporter](plainMux),
		"Attributer":    has[Attributer](plainMux),
		"WriterLocker":  has[WriterLocker](plainMux),
		"Prechecker":    has[Prechecker](plainMux),
	} {
		if !ok {
			t.Errorf("the mux no longer offers %s", name)
		}
	}

	r := &router{}
	m := NewMux(map[string]Store{"/a": plain{}, "/dir": r})
	rt, ok := As[Router](m)
	if !ok {
		t.Fatal("a mux with a router mounted does not offer Router")
	}
	if got, err := rt.Route(ctx, Call{Op: "stat", Path: "/a/f"}); err != nil || !got.Here() {
		t.Errorf("Route of a plain store's path = %+v, %v; want here", got, err)
	}
	if got, err := rt.Route(ctx, Call{Op: "stat", Path: "/dir/f"}); err != nil || got.Here() {
		t.Errorf("Route of the router's path = %+v, %v; want a redirect", got, err)
	}
	if len(r.asked) != 1 || r.asked[0] != "/dir/f" {
		t.Errorf("the router was asked about %q; want only /dir/f", r.asked)
	}
}

func has[T any](s Store) bool {
	_, ok := As[T](s)
	return ok
}
