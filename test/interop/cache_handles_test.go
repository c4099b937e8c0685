package interop

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sitebox/internal/xrootd/client"
)

// TestCacheUpstreamFilesBounded: 50,000 distinct small files read one
// after another through a cache (each opened, read and closed by its
// client) leave the sitebox origin with a bounded number of open files —
// the cache closes upstream files nobody holds — and the origin still
// answers other clients.
func TestCacheUpstreamFilesBounded(t *testing.T) {
	const nFiles, capFiles, workers, streams = 50000, 64, 8, 16
	o := startBox(t, 1)
	for i := range nFiles {
		p := filepath.Join(o.pools[0], "many", fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := startCache(t, cacheConf{dir: t.TempDir(),
		routes: []cacheRoute{{"/store", []string{o.rootURL}}},
		extra:  []string{"upstream_files = " + strconv.Itoa(capFiles), `upstream_idle = "2s"`}})
	base := openFDs(t, o.proc)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fs := client.NewFS(c.rootHost)
	defer fs.Close()
	var next, peak atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	stop := make(chan struct{})
	go func() { // sample the origin's descriptors while the clients read
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			// Not openFDs: this goroutine may not end the test.
			es, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(o.proc.Cmd.Process.Pid), "fd"))
			if n := int64(len(es)); n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 16)
			for i := next.Add(1) - 1; i < nFiles; i = next.Add(1) - 1 {
				name := fmt.Sprintf("/store/many/d%02d/f%05d", i%100, i)
				f, err := fs.Open(ctx, name)
				if err != nil {
					errs <- fmt.Errorf("open %s: %w", name, err)
					return
				}
				n, _ := f.ReadAt(buf, 0)
				f.Close()
				if got := string(buf[:n]); got != strconv.Itoa(int(i)) {
					errs <- fmt.Errorf("%s: read %q, want %q", name, got, strconv.Itoa(int(i)))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d files through the cache in %v; origin descriptors: %d before, %d at the peak", nFiles, time.Since(start), base, peak.Load())
	// The origin's own descriptors, the cache's connections (16 streams),
	// the cap, and room for closes still on their way.
	if limit := int64(base + streams + capFiles + 16); peak.Load() > limit {
		t.Errorf("the origin had %d descriptors open at the peak, want at most %d (%d before the reads, cap %d)", peak.Load(), limit, base, capFiles)
	}
	waitFor(t, 30*time.Second, "the origin's files to be closed after the idle time", func() bool {
		return openFDs(t, o.proc) <= base+streams+2
	})
	// And the origin answers a direct client as before.
	if out, err := run(t, true, "xrdfs", o.rootHost, "stat", "/store/many/d00/f00000"); err != nil {
		t.Errorf("origin after the run: %v: %s", err, out)
	}
}
