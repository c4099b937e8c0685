package auth

import (
	"testing"

	"sitebox/internal/store"
)

// BenchmarkRoutedStat runs a stat as the frontends do (RouteOf, then
// Stat) through the guard over three chains, and reports the policy
// decisions each stat cost (decisions/op): 1 on every chain.
func BenchmarkRoutedStat(b *testing.B) {
	reader := &store.Request{Identity: ident(nil, "read:/store/user")}
	for _, chain := range []struct {
		name  string
		inner store.Store
	}{
		{"plain", newMemStore("/store/user/f")},
		{"mux", store.NewMux(map[string]store.Store{"/store": newMemStore("/store/user/f"), "/pub": newMemStore()})},
		{"router-here", &hereRouter{memStore: newMemStore("/store/user/f")}},
	} {
		b.Run(chain.name, func(b *testing.B) {
			g := NewGuard(chain.inner, testPolicy(b), nil).(*guard)
			c := &countingRules{rules: g.p}
			g.p = c
			call := store.Call{Op: "stat", Path: "/store/user/f"}
			b.ReportAllocs()
			for b.Loop() {
				ctx := reqCtx(reader)
				if rt, err := store.RouteOf(ctx, g, call); err != nil || !rt.Here() {
					b.Fatal(rt, err)
				}
				if _, err := g.Stat(ctx, call.Path); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.n)/float64(b.N), "decisions/op")
		})
	}
}
