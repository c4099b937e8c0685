package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRelayCountsWhileOpen checks the count is exact while the upstream
// connection stays open, as a cache keeps it.
func TestRelayCountsWhileOpen(t *testing.T) {
	const size = 3<<20 + 777
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write(make([]byte, size))
		<-release
	}()
	r, err := StartRelay(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if got := r.Down(); got != size {
		t.Errorf("counted %d bytes with the connection open, want %d", got, size)
	}
	close(release)
	done := make(chan struct{})
	go func() { r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
}

func TestPromHitRatio(t *testing.T) {
	tests := []struct {
		name, body string
		want       float64
		wantErr    bool
	}{
		{"plain", "# TYPE x counter\nsitebox_cache_served_bytes_total{source=\"hit\"} 300\nsitebox_cache_served_bytes_total{source=\"miss\"} 100\nsitebox_cache_upstream_bytes_total 999\n", 0.75, false},
		{"labels summed", "sitebox_cache_served_bytes_total{route=\"/a\",source=\"hit\"} 1\nsitebox_cache_served_bytes_total{source=\"hit\",route=\"/b\"} 2\nsitebox_cache_served_bytes_total{source=\"miss\"} 0\nsitebox_cache_served_bytes_total{source=\"bypass\"} 1\n", 0.75, false},
		{"missing", "other_total 5\n", 0, true},
		{"empty", "sitebox_cache_served_bytes_total{source=\"hit\"} 0\n", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, tc.body) }))
			defer srv.Close()
			got, err := promHitRatio(context.Background(), srv.URL+"/metrics")
			if (err != nil) != tc.wantErr || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("got %v, %v; want %v (error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestOverlapAndSeries(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	rec := copyRec{start: at(0.5), end: at(2.5), bytes: 2e6}
	tests := []struct {
		name     string
		from, to float64
		want     int64
	}{
		{"inside", 0, 3, 2e6},
		{"first half second", 0, 1, 0.5e6},
		{"middle", 1, 2, 1e6},
		{"after", 3, 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := overlapBytes(rec, at(tc.from), at(tc.to)); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
	s := series(&pointRun{t0: t0, end: at(2.5), recs: []copyRec{rec}}, time.Second)
	want := []float64{0.5, 1, 1} // the last, half-full bin scaled to its half second
	if len(s) != len(want) {
		t.Fatalf("series %v, want %d bins", s, len(want))
	}
	for i, w := range want {
		if math.Abs(s[i].MBps-w) > 1e-6 || s[i].T != float64(i) {
			t.Errorf("bin %d = %+v, want %.1f MB/s at %ds", i, s[i], w, i)
		}
	}
	if math.Abs(hitRatio(90, 100)-0.1) > 1e-9 {
		t.Errorf("hitRatio(90, 100) = %v", hitRatio(90, 100))
	}
	if hitRatio(150, 100) != 0 || hitRatio(0, 0) != 0 {
		t.Error("hitRatio must stay within [0, 1]")
	}
}
