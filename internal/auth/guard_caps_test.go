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
		"locate":    has[store.Locator](g),
		"namespace": has[store.Namespace](g),
		"space":     has[store.SpaceReporter](g),
	} {
		if ok {
			t.Errorf("%s offered by a guard over a store without it", name)
		}
	}
}

func has[T any](s store.Store) bool { _, ok := store.As[T](s); return ok }
