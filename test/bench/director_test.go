package bench

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/origin"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/server"
	"sitebox/internal/xrootd/xrdtest"
)

// directorDouble serves root:// in process over the benchmark files,
// a store that asks route first for every call (nil: serve the file).
func directorDouble(t *testing.T, route func(op, name string) (store.Route, error)) (addr string, paths []string) {
	t.Helper()
	dir := t.TempDir()
	paths, err := makeDirectorFiles(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	rs := &xrdtest.RouteStore{Store: o, Decide: route}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{}, rs, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String(), paths
}

// redirectOpens sends every open to 127.0.0.1:port, as a director
// would, and serves everything else.
func redirectOpens(port int) func(op, name string) (store.Route, error) {
	redirect := xrdtest.RedirectAll([]store.Endpoint{{Root: "127.0.0.1:" + strconv.Itoa(port)}}, "sbx.hops=1")
	return func(op, name string) (store.Route, error) {
		if op == "open" {
			return redirect(op, name)
		}
		return store.Route{}, nil
	}
}

// The load generator counts redirects to the data server, honours a
// kXR_wait during the warm-up, and times every round trip.
func TestDirectorLoadCountsRedirects(t *testing.T) {
	var once sync.Once
	redirect := redirectOpens(1094)
	addr, paths := directorDouble(t, func(op, name string) (store.Route, error) {
		wait := false
		if op == "open" && name == "/bench/file0003.dat" {
			once.Do(func() { wait = true })
		}
		if wait {
			return store.Route{Retry: true, Wait: time.Second, Reason: "searching"}, nil
		}
		return redirect(op, name)
	})
	ctx := context.Background()
	waits, err := warmUp(ctx, addr, openOp(1094), paths, 5*time.Second)
	if err != nil || waits != 1 {
		t.Fatalf("warm-up: %d waits, %v; want 1 wait and no error", waits, err)
	}
	res, err := runLoad(ctx, addr, openOp(1094), paths, 3, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.Done < 10 || res.Errors != 0 || res.Waits != 0 {
		t.Fatalf("%d redirects, %d waits, %d errors (%s): want many redirects, nothing else", res.Done, res.Waits, res.Errors, res.FirstError)
	}
	if len(res.Latencies) != res.Done || !slices.IsSorted(res.Latencies) || res.Quantile(0.5) <= 0 || res.Quantile(0.99) < res.Quantile(0.5) {
		t.Fatalf("%d latencies for %d redirects, p50 %v p99 %v", len(res.Latencies), res.Done, res.Quantile(0.5), res.Quantile(0.99))
	}
	if res.Elapsed < 300*time.Millisecond || res.PerSec() <= 0 {
		t.Fatalf("elapsed %v, %.0f/s", res.Elapsed, res.PerSec())
	}
	// The floor: stat answered by the server itself.
	res, err = runLoad(ctx, addr, statOp(), paths, 1, 100*time.Millisecond)
	if err != nil || res.Done == 0 || res.Errors != 0 {
		t.Fatalf("stat load: %+v, %v", res, err)
	}
}

// Anything but a redirect to the data server is an error with its
// message: a redirect elsewhere, a kXR_error, a server that opens the
// file itself.
func TestDirectorLoadReportsErrors(t *testing.T) {
	ctx := context.Background()
	addr, paths := directorDouble(t, redirectOpens(1094))
	res, err := runLoad(ctx, addr, openOp(2094), paths, 1, 50*time.Millisecond)
	if err != nil || res.Done != 0 || res.Errors == 0 || !strings.Contains(res.FirstError, "not to the data server's port 2094") {
		t.Fatalf("redirect elsewhere: %+v, %v", res, err)
	}
	if _, err := warmUp(ctx, addr, openOp(2094), paths, time.Second); err == nil || !strings.Contains(err.Error(), "warm-up") {
		t.Fatalf("warm-up with wrong redirects: %v", err)
	}

	addr, _ = directorDouble(t, func(op, name string) (store.Route, error) {
		return store.Route{}, &store.PathError{Op: op, Path: name, Err: store.ErrNotFound}
	})
	res, err = runLoad(ctx, addr, openOp(1094), paths, 1, 50*time.Millisecond)
	if err != nil || res.Errors == 0 || !strings.Contains(res.FirstError, "kXR_error 3011") {
		t.Fatalf("not found: %+v, %v", res, err)
	}

	// No redirect at all: the double serves the file.
	addr, _ = directorDouble(t, nil)
	res, err = runLoad(ctx, addr, openOp(1094), paths, 1, 50*time.Millisecond)
	if err != nil || res.Errors == 0 || !strings.Contains(res.FirstError, "instead of redirecting") {
		t.Fatalf("opened: %+v, %v", res, err)
	}
}

// The table has a row per point, the ratio, the added latency over the
// floor, and the targets marked.
func TestFormatDirector(t *testing.T) {
	rep := &DirectorReport{
		Config:     DirectorConfig{Files: 100, Clients: []int{1, 4}, Duration: 10 * time.Second},
		DataServer: "127.0.0.1:1094", CPUs: 2,
		Floor: DirectorPoint{Setup: "direct", Clients: 1, PerSec: 10000, P50: 80 * time.Microsecond, P99: 200 * time.Microsecond},
		Points: []DirectorPoint{
			{Setup: "sitebox", Clients: 1, PerSec: 9000, P50: 100 * time.Microsecond, P99: 300 * time.Microsecond},
			{Setup: "cmsd", Clients: 1, PerSec: 5000, P50: 200 * time.Microsecond, P99: 400 * time.Microsecond},
			{Setup: "cmsd", Clients: 4, PerSec: 20000, P50: 190 * time.Microsecond, P99: 500 * time.Microsecond},
			{Setup: "sitebox", Clients: 4, PerSec: 25000, P50: 150 * time.Microsecond, P99: 600 * time.Microsecond, Errors: 2, FirstError: "open /x: kXR_error 3011: no such file"},
		},
		PeakRSS: map[string]int64{"sitebox": 30 << 20, "cmsd": 20 << 20},
	}
	out := FormatDirector(rep)
	for _, want := range []string{
		"| sitebox director | 1 | 9000 | 1.80× | 100 µs | 300 µs | 0 | 0 |",
		"| cmsd manager (xrootd + cmsd) | 4 | 20000 |  | 190 µs | 500 µs | 0 | 0 |",
		"| sitebox director | 100 µs | 80 µs | 20 µs |",
		"| 1 | 1.80× ✓ | 20 µs ✓ |",
		"| 4 | 1.25× ✗ |  |",
		"sitebox director 30 MiB; cmsd manager (xrootd + cmsd) 20 MiB",
		"sitebox director, 4 clients: 2 errors, first: open /x: kXR_error 3011",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
