package auth

import (
	"context"
	"errors"
	"testing"

	"sitebox/internal/store"
)

// Every capability the guard offers is the guard itself, checking the
// policy: none reaches the inner store around it, and the guard offers
// exactly the inner store's capabilities (the root:// login announces
// features from them).
func TestGuardCapabilitiesStayGuarded(t *testing.T) {
	m := newMemStore("/store/user/f")
	g := NewGuard(m, testPolicy(t), nil)
	anon := reqCtx(&store.Request{})
	check := func(name string, got any, ok bool, call func() error) {
		t.Helper()
		if !ok {
			t.Fatalf("%s: not offered, though the inner store has it", name)
		}
		if got != any(g) {
			t.Fatalf("%s: offered %T, want the guard itself", name, got)
		}
		if err := call(); !errors.Is(err, store.ErrPermission) {
			t.Errorf("%s by an anonymous client: %v, want a denial", name, err)
		}
	}
	c, ok := store.As[store.Creator](g)
	check("create", c, ok, func() error {
		_, err := c.Create(anon, "/store/user/g", store.CreateOptions{Exclusive: true})
		return err
	})
	sum, ok := store.As[store.Checksummer](g)
	check("checksum", sum, ok, func() error { _, err := sum.Checksum(anon, "/store/user/f", "adler32"); return err })
	loc, ok := store.As[store.Locator](g)
	check("locate", loc, ok, func() error { _, err := loc.Locate(anon, "/store/user/f"); return err })
	ns, ok := store.As[store.Namespace](g)
	check("namespace", ns, ok, func() error { return ns.Remove(anon, "/store/user/f") })
	sp, ok := store.As[store.SpaceReporter](g)
	check("space", sp, ok, func() error { _, err := sp.Space(anon, "/store/user"); return err })
	at, ok := store.As[store.Attributer](g)
	check("getxattr", at, ok, func() error {
		_, err := at.Attrs(anon, "/store/user/f", store.AttrQuery{Op: store.AttrGet, Attrs: []store.Attr{{Name: "a"}}})
		return err
	})
	check("setxattr", at, ok, func() error {
		_, err := at.Attrs(anon, "/store/user/f", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "a"}}})
		return err
	})
	if calls := m.called(); len(calls) != 0 {
		t.Errorf("denied calls reached the inner store: %v", calls)
	}
}

// bareStore has none of the optional capabilities.
type bareStore struct{ m *memStore }

func (b bareStore) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	return b.m.Stat(ctx, name)
}
func (b bareStore) Open(ctx context.Context, name string) (store.File, error) {
	return b.m.Open(ctx, name)
}
func (b bareStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	return b.m.List(ctx, name)
}

func TestGuardOffersNothingInnerLacks(t *testing.T) {
	g := NewGuard(bareStore{newMemStore()}, testPolicy(t), nil)
	for name, ok := range map[string]bool{
		"create":    has[store.Creator](g),
		"checksum":  has[store.Checksummer](g),
		"namespace": has[store.Namespace](g),
		"space":     has[store.SpaceReporter](g),
	} {
		if ok {
			t.Errorf("%s offered by a guard over a store without it", name)
		}
	}
}

func has[T any](s store.Store) bool { _, ok := store.As[T](s); return ok }

// routerStore sends every call elsewhere and counts the questions.
type routerStore struct {
	*memStore
	asked int
}

func (r *routerStore) Route(ctx context.Context, c store.Call) (store.Route, error) {
	r.asked++
	return store.Route{To: []store.Endpoint{{Root: "elsewhere:1094"}}}, nil
}

// A client the policy refuses is refused before the router is asked: it
// learns nothing about where files are. One it allows gets the route.
func TestGuardChecksBeforeRouting(t *testing.T) {
	inner := &routerStore{memStore: newMemStore()}
	g := NewGuard(inner, testPolicy(t), nil)
	rt, ok := store.As[store.Router](g)
	if !ok || rt != any(g) {
		t.Fatalf("Router offered as %T (%v), want the guard", rt, ok)
	}
	for _, op := range []string{"stat", "open", "checksum", "list", "locate"} {
		if _, err := rt.Route(reqCtx(&store.Request{}), store.Call{Op: op, Path: "/store/user/f"}); !errors.Is(err, store.ErrPermission) {
			t.Errorf("%s by an anonymous client: %v, want a denial", op, err)
		}
	}
	if _, err := rt.Route(reqCtx(&store.Request{}), store.Call{Op: "rm", Path: "/store/user/f"}); !errors.Is(err, store.ErrPermission) {
		t.Errorf("rm routed elsewhere for an anonymous client: %v, want a denial", err)
	}
	asked := inner.asked
	if asked != 1 { // only rm asks first: a change served here is checked when made
		t.Errorf("router asked %d times before the denials, want 1", asked)
	}
	reader := reqCtx(&store.Request{Identity: ident(nil, "read:/store/user")})
	r, err := rt.Route(reader, store.Call{Op: "open", Path: "/store/user/f"})
	if err != nil || r.Here() {
		t.Errorf("open by a reader: %+v %v, want the route", r, err)
	}
	if has[store.Router](NewGuard(newMemStore(), testPolicy(t), nil)) {
		t.Error("Router offered over a store without one")
	}
}

// Reading attributes needs read access; changing them storage.modify
// (storage.create is not enough: the file may be someone else's).
func TestGuardAttrScopes(t *testing.T) {
	m := newMemStore("/store/user/f")
	g := NewGuard(m, testPolicy(t), nil)
	at, _ := store.As[store.Attributer](g)
	get := store.AttrQuery{Op: store.AttrGet, Attrs: []store.Attr{{Name: "a"}}}
	set := store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "a"}}}
	for _, tc := range []struct {
		name  string
		scope []string
		q     store.AttrQuery
		ok    bool
	}{
		{"read gets", []string{"read:/store/user"}, get, true},
		{"read cannot set", []string{"read:/store/user"}, set, false},
		{"create cannot set", []string{"read:/store/user", "create:/store/user"}, set, false},
		{"modify sets", []string{"modify:/store/user"}, set, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := reqCtx(&store.Request{Identity: ident(nil, tc.scope...)})
			_, err := at.Attrs(ctx, "/store/user/f", tc.q)
			if (err == nil) != tc.ok {
				t.Fatalf("%s: %v, want allowed %v", tc.q.Op, err, tc.ok)
			}
		})
	}
}
