package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// restartBox stops b's sitebox with SIGTERM, as systemctl restart does
// (waiting up to the unit's TimeoutStopSec of 30 s), and starts it again
// on the same ports with the same config.
func restartBox(t *testing.T, b *box, args ...string) (stopped time.Duration) {
	t.Helper()
	start := time.Now()
	syscall.Kill(b.proc.Cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.proc.Exited():
	case <-time.After(30 * time.Second):
		t.Fatalf("sitebox did not stop within 30 s of SIGTERM")
	}
	stopped = time.Since(start)
	relaunch(t, b, args...)
	return stopped
}

// TestCacheRestartDuringReads: a cache restarted (SIGTERM, then started
// again) while four rate-limited xrdcp reads go through it; with XrdCl's
// default settings every copy finishes byte-identical within 30 s of the
// restart: the stopping cache lets running transfers finish.
func TestCacheRestartDuringReads(t *testing.T) {
	peers.Require(t, "xrdcp")
	origin := startBox(t, 1)
	const size = 12 << 20
	want := writeRandom(t, filepath.Join(origin.pools[0], "big.bin"), size)
	c := startCache(t, cacheConf{dir: t.TempDir(), routes: []cacheRoute{{prefix: "/store", upstreams: []string{origin.rootURL}}}})
	dir := t.TempDir()

	type result struct {
		out  string
		err  error
		done time.Time
	}
	results := make([]result, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			// XrdCl's defaults: no XRD_* settings.
			cmd := exec.Command("xrdcp", "-f", "--xrate", "2M", c.rootURL+"//store/big.bin", filepath.Join(dir, strconv.Itoa(i)))
			out, err := cmd.CombinedOutput()
			results[i] = result{string(out), err, time.Now()}
		})
	}
	// Restart once every copy is moving.
	waitFor(t, 30*time.Second, "all four copies moving", func() bool {
		for i := range results {
			if fi, err := os.Stat(filepath.Join(dir, strconv.Itoa(i))); err != nil || fi.Size() == 0 {
				return false
			}
		}
		return true
	})
	restarted := time.Now()
	stopped := restartBox(t, c, "serve", "--config", filepath.Join(c.state, "sitebox.toml"))
	t.Logf("cache stopped %v after SIGTERM and restarted", stopped.Round(time.Millisecond))
	wg.Wait()
	for i, r := range results {
		took := r.done.Sub(restarted)
		t.Logf("copy %d: finished %v after the restart began", i, took.Round(time.Millisecond))
		if r.err != nil {
			t.Errorf("copy %d failed: %v\n%s", i, r.err, r.out)
			continue
		}
		if took > 30*time.Second {
			t.Errorf("copy %d finished %v after the restart, want within 30 s", i, took)
		}
		sameFile(t, filepath.Join(dir, strconv.Itoa(i)), want)
	}
	// The restarted cache serves.
	run(t, false, "xrdcp", "-f", c.rootURL+"//store/big.bin", filepath.Join(dir, "after"))
	sameFile(t, filepath.Join(dir, "after"), want)
}

// TestDirectorRestartNoReadFails: reads through a director keep
// succeeding while it is restarted: the stopping director drains, and
// the new one answers "wait" (not "not found") until its servers have
// advertised again.
func TestDirectorRestartNoReadFails(t *testing.T) {
	peers.Require(t, "xrdcp")
	dirNode := startFedNode(t, "region", "R", "[director]\nenabled = true\n")
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "f.bin"), 1<<20)
	startFedNode(t, "originA", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+advertiseTo(dirNode, "1s"))
	dir := t.TempDir()
	waitFor(t, 15*time.Second, "origin advertised", func() bool {
		_, err := run(t, true, "xrdcp", "-f", dirNode.rootURL+"//store/f.bin", filepath.Join(dir, "probe"))
		return err == nil
	})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reads, failures int
	for w := range 2 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				dst := filepath.Join(dir, strconv.Itoa(w)+"-"+strconv.Itoa(i))
				// XrdCl's defaults: no XRD_* settings.
				out, err := exec.Command("xrdcp", "-f", dirNode.rootURL+"//store/f.bin", dst).CombinedOutput()
				mu.Lock()
				reads++
				if err != nil {
					failures++
					t.Errorf("read %d-%d through the director failed: %v\n%s", w, i, err, out)
				}
				mu.Unlock()
				if err == nil {
					sameFile(t, dst, want)
				}
				os.Remove(dst)
			}
		})
	}
	time.Sleep(time.Second)
	stopped := restartBox(t, dirNode.box, "serve", "--config", filepath.Join(dirNode.state, "sitebox.toml"))
	restarted := time.Now()
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("director stopped in %v; %d reads, %d failed; last ones done %v after the restart",
		stopped.Round(time.Millisecond), reads, failures, time.Since(restarted).Round(time.Millisecond))
}
