package director

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sitebox/internal/store"
)

// scaleDirector is a director with n origins in 50 sites, all exporting
// /scale, and file f held by server f mod n: the registry of
// `sitebox-bench director --scale n`, probed in process.
// With filters each server advertises a holdings filter of its file.
func scaleDirector(b *testing.B, n int, filters bool) (*Director, *fakeProber) {
	b.Helper()
	p := &fakeProber{files: map[string][]string{}}
	// A first search of 10,000 servers may take longer than a root://
	// client is kept waiting: the benchmark waits it out.
	d := newWithProber(Config{Name: "dir", Site: "site0", MaxServers: n, WaitAfter: time.Minute}, p, nil)
	for i := range n {
		root := fmt.Sprintf("127.0.0.1:%d", 10000+i)
		p.files[root] = []string{fmt.Sprintf("/scale/f%d", i)}
		a := Ad{Name: fmt.Sprintf("s%05d", i), Site: fmt.Sprintf("site%d", i%50), Role: RoleOrigin,
			Root: root, Prefixes: []string{"/scale"}, Load: float64(i%7) / 10, Interval: 3600}
		if filters {
			a.Holdings = NewHoldings(append([]string{"/scale"}, p.files[root]...))
		}
		if err := d.Advertise(a); err != nil {
			b.Fatal(err)
		}
	}
	return d, p
}

// BenchmarkLocate is one redirect for a file already located (held by
// one server), among 1,000 and 10,000 servers exporting its prefix.
func BenchmarkLocate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			d, _ := scaleDirector(b, n, false)
			ctx := store.WithRequest(context.Background(), store.NewRequest("10.0.0.1", ""))
			names := make([]string, 20)
			for k := range names {
				names[k] = fmt.Sprintf("/scale/f%d", k*7%n)
				if rt, err := d.Route(ctx, store.Call{Op: "open", Path: names[k]}); err != nil || len(rt.To) != 1 {
					b.Fatalf("%s: %+v %v", names[k], rt, err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := d.Route(ctx, store.Call{Op: "open", Path: names[i%len(names)]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLocateFirst is the first open of a file: every server
// exporting its prefix is asked (answering at once, in process), or
// with holdings filters the few they point to.
func BenchmarkLocateFirst(b *testing.B) {
	for _, filters := range []bool{false, true} {
		for _, n := range []int{1000, 10000} {
			b.Run(fmt.Sprintf("filters=%v/servers=%d", filters, n), func(b *testing.B) {
				benchLocateFirst(b, n, filters)
			})
		}
	}
}

func benchLocateFirst(b *testing.B, n int, filters bool) {
	d, _ := scaleDirector(b, n, filters)
	ctx := store.WithRequest(context.Background(), store.NewRequest("10.0.0.1", ""))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("/scale/f%d", i%n)
		d.loc.forget(name)
		if rt, err := d.Route(ctx, store.Call{Op: "open", Path: name}); err != nil || len(rt.To) != 1 {
			b.Fatalf("%s: %+v %v", name, rt, err)
		}
	}
}

// BenchmarkAdvertise is one server's periodic advertisement among 1,000
// and 10,000 (the ad itself: the HTTP API verifies its signature first).
func BenchmarkAdvertise(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			d, _ := scaleDirector(b, n, false)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := i % n
				if err := d.Advertise(Ad{Name: fmt.Sprintf("s%05d", k), Site: fmt.Sprintf("site%d", k%50), Role: RoleOrigin,
					Root: fmt.Sprintf("127.0.0.1:%d", 10000+k), Prefixes: []string{"/scale"}, Load: float64(i%7) / 10, Interval: 3600}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAdvertiseSigned is one signed advertisement through the
// director's API handler (no TLS), among 1,000 and 10,000 members that
// have all advertised: what the director spends per ad.
func BenchmarkAdvertiseSigned(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("servers=%d", n), func(b *testing.B) {
			signers := make([]*Signer, n)
			ads := make([][]byte, n)
			var members []Member
			for i := range n {
				_, key, _ := ed25519.GenerateKey(nil)
				name, root := fmt.Sprintf("s%05d", i), fmt.Sprintf("127.0.0.1:%d", 10000+i)
				signers[i] = &Signer{Member: name, Key: key}
				members = append(members, Member{Name: name, Key: FormatKey(key.Public().(ed25519.PublicKey)), Roles: []string{RoleOrigin},
					Prefixes: []string{"/scale"}, Root: root, HTTPS: "https://" + root, Site: fmt.Sprintf("site%d", i%50)})
				ads[i], _ = json.Marshal(Ad{Name: name, Site: fmt.Sprintf("site%d", i%50), Role: RoleOrigin, Root: root, HTTPS: "https://" + root,
					Prefixes: []string{"/scale"}, Interval: 10, Free: 1 << 40, Total: 1 << 41, Version: "bench", Health: "ok"})
			}
			d := newWithProber(Config{Name: "dir", Members: members, MaxServers: n}, &fakeProber{}, nil)
			h := d.Handler()
			send := func(i int) {
				req := httptest.NewRequest(http.MethodPost, APIPrefix+"advertise", bytes.NewReader(ads[i]))
				signers[i].Sign(req.Header, ads[i])
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusNoContent {
					b.Fatalf("ad %d: %d %s", i, w.Code, w.Body)
				}
			}
			for i := range n {
				send(i)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				send(i % n)
			}
		})
	}
}
