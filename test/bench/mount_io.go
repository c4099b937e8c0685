package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// readRate reads path from start to end with 1 MiB reads (as dd bs=1M
// to /dev/null) and returns MB/s.
func readRate(ctx context.Context, path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	t0 := time.Now()
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		k, err := f.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	return float64(n) / 1e6 / time.Since(t0).Seconds(), nil
}

// xrdcpRate copies url to /dev/null with xrdcp and returns MB/s of size
// bytes over the whole command (connection set-up included, as for the
// mount's read, whose open is in its time).
func xrdcpRate(ctx context.Context, url string, size int64) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	if out, err := clientCmd(ctx, []string{"xrdcp", "-f", "-s", url, "/dev/null"}, nil).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("%v: %s", err, trimMsg(out))
	}
	return float64(size) / 1e6 / time.Since(t0).Seconds(), nil
}

// fioRandRead reads path once (so a caching mount holds it), then runs
// fio random 4 KiB reads on it for d and returns the IOPS. fio drops the
// file's pages from the kernel's page cache first (its default), so the
// reads reach the file system: the mount's cache, or the disk.
func fioRandRead(ctx context.Context, path string, d time.Duration) (float64, error) {
	if _, err := readRate(ctx, path); err != nil {
		return 0, fmt.Errorf("read it first: %w", err)
	}
	j, err := runFio(ctx, []string{"--name=randread", "--filename=" + path, "--readonly", "--rw=randread",
		"--bs=4k", "--ioengine=psync", "--time_based", "--runtime=" + strconv.Itoa(int(d.Seconds())) + "s"}, d)
	return j.Read.IOPS, err
}

// startAtPy holds a reader process until the Unix time at, after its
// imports, so that readers started together read together:
// uprootJobsPy + startAtPy(at) + runThreadsPy.
func startAtPy(at time.Time) string {
	return fmt.Sprintf("\ntime.sleep(max(0.0, %.3f - time.time()))\n", float64(at.UnixNano())/1e9)
}

// uprootReaders runs uproot readers over prefix (a mount's directory
// holding /store, or the root:// URL of /store): first one unmeasured
// reader, which fills a caching mount's cache as a first job would, then
// each count of reader processes started together, each running
// cfg.Jobs jobs (4 of the tree's 200 branches). Rates are MB/s of arrays.
func (e *mountEnv) uprootReaders(ctx context.Context, prefix string, d *mountData, p *MountPoint) error {
	if _, err := e.uprootProcs(ctx, prefix, d, 1, 0); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, n := range e.cfg.Readers {
		mbps, err := e.uprootProcs(ctx, prefix, d, n, 1)
		if err != nil {
			return fmt.Errorf("%d readers: %w", n, err)
		}
		p.Uproot[n] = mbps
		fmt.Fprintf(e.cfg.Out, "  uproot, %d readers: %.1f MB/s\n", n, mbps)
	}
	return nil
}

// uprootProcs runs n reader processes (one thread each, distinct seeds
// after seed) together and returns their bytes over the longest one's
// time, in MB/s.
func (e *mountEnv) uprootProcs(ctx context.Context, prefix string, d *mountData, n int, seed int) (float64, error) {
	ac := &AnalysisConfig{Python: e.cfg.Python}
	// Importing uproot takes one or two CPU seconds: n of them on a
	// small machine take n seconds or more, and must be done before the
	// first reader starts reading.
	script := uprootJobsPy + startAtPy(time.Now().Add(2*time.Second+time.Duration(2*n)*time.Second)) + runThreadsPy
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		bytes int64
		secs  float64
		first error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"-c", script, prefix, "1", strconv.Itoa(e.cfg.Jobs), "4", "200", strconv.Itoa(seed*1000 + i)}
			r, err := runPass(ctx, ac, "uproot reader", append(args, d.uproot...))
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			bytes += r.Bytes
			secs = max(secs, r.Seconds)
		}()
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(bytes) / 1e6 / secs, nil
}
