package doctor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"sitebox/internal/config"
	"sitebox/internal/dio"
	"sitebox/internal/units"
)

// chunk is the size of each write: large, like the cache's block writes,
// and a multiple of any disk's sector so O_DIRECT accepts it.
const chunk = 1 << 20

// checkDiskSpeed writes a few files in parallel to the cache dir and
// compares the rate with the network's. Every block read through the
// cache is written there; a disk slower than the network caps transfers
// at its own speed, which looks like a slow network from outside.
func checkDiskSpeed(ctx context.Context, cfg *config.Config, o *Options) []Check {
	dir := cfg.Cache.Dir
	c := Check{Name: "cache dir " + dir}
	if dir == "" {
		c.Name, c.Status, c.Summary = "cache dir", StatusSkip, "no [cache] dir"
		return []Check{c}
	}
	size := (o.DiskFileSize + 4095) &^ 4095
	need := uint64(o.DiskFiles) * uint64(size)
	if fs, err := o.Statfs(dir); err == nil && fs.Avail < 2*need {
		c.Status = StatusSkip
		c.Summary = fmt.Sprintf("not tested: %s free, the test needs %s and leaves room", units.FormatSize(int64(fs.Avail)), units.FormatSize(int64(2*need)))
		return []Check{c}
	}
	written, elapsed, err := writeTest(ctx, dir, o.DiskFiles, size, o)
	if err != nil {
		c.Status = StatusError
		c.Summary = "cannot write test files: " + err.Error()
		c.Explain = "The cache writes its blocks in this directory; it cannot do so either."
		c.Fix = "Create the directory, make it writable by the user the box runs as, and check `dmesg` for disk errors."
		return []Check{c}
	}
	rate := float64(written) / elapsed.Seconds()
	what := fmt.Sprintf("%s in %d files in parallel in %s", units.FormatSize(written), o.DiskFiles, elapsed.Round(time.Millisecond))
	if rate >= o.NetworkSpeed {
		c.Status = StatusOK
		c.Summary = fmt.Sprintf("the cache disk writes at %s (%s), faster than the %s network", mbps(rate), what, mbps(o.NetworkSpeed))
		return []Check{c}
	}
	c.Status = StatusWarn
	c.Summary = fmt.Sprintf("the cache disk writes at %s, slower than the %s network: the cache would throttle transfers (%s)", mbps(rate), mbps(o.NetworkSpeed), what)
	c.Explain = "Every block read through the cache is written to this disk first, so transfers through the cache go no faster than the disk writes — from outside it looks like a slow network."
	c.Fix = "Usual causes: a RAID controller with its write cache off (no battery: enable write-back in the controller's tool); " +
		"Linux md RAID5/6 with a small stripe cache (echo 8192 > /sys/block/mdX/md/stripe_cache_size); " +
		"ZFS with sync=always or a small recordsize (zfs set sync=standard recordsize=1M POOL/DATASET); " +
		"a filesystem mounted with sync (see `findmnt -T " + dir + "`); a shared or network disk. " +
		"Otherwise put the cache on faster disks (SSD/NVMe), or give --network-speed if the link is slower than assumed."
	return []Check{c}
}

// writeTest writes n files of size bytes in dir in parallel, each until
// done or until o.DiskTime has passed, syncs them, and removes them. It
// returns the bytes written and the time until the last file was on disk.
// Real time is used, not o.Now: that clock is for comparing with peers.
func writeTest(ctx context.Context, dir string, n int, size int64, o *Options) (int64, time.Duration, error) {
	buf := testData(min(size, chunk))
	ctx, cancel := context.WithTimeout(ctx, o.DiskTime)
	defer cancel()
	var (
		mu    sync.Mutex
		total int64
		errs  []error
		wg    sync.WaitGroup
	)
	start := time.Now()
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf(".sitebox-doctor-%d-%d", os.Getpid(), i))
		wg.Go(func() {
			defer os.Remove(path)
			w, err := writeOne(ctx, path, buf, size, o)
			mu.Lock()
			defer mu.Unlock()
			total += w
			if err != nil {
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, 0, err
	}
	if total == 0 {
		return 0, 0, errors.New("nothing was written in the time allowed")
	}
	return total, elapsed, nil
}

// writeOne fills one file until size bytes or the deadline, then closes
// it (which syncs); the close is part of the measured time.
func writeOne(ctx context.Context, path string, buf []byte, size int64, o *Options) (int64, error) {
	w, err := o.OpenWriter(path)
	if err != nil {
		return 0, err
	}
	var done int64
	for done < size && ctx.Err() == nil {
		n, err := w.Write(buf[:min(int64(len(buf)), size-done)])
		done += int64(n)
		if err != nil {
			w.Close()
			return done, fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Close(); err != nil {
		return done, fmt.Errorf("sync %s: %w", path, err)
	}
	return done, nil
}

// syncCloser makes Close wait for the data to reach the disk.
type syncCloser struct{ *os.File }

func (s syncCloser) Close() error {
	err := s.File.Sync()
	if cerr := s.File.Close(); err == nil {
		err = cerr
	}
	return err
}

// testData is n bytes aligned for O_DIRECT, filled with random bytes so
// compressing filesystems (ZFS, btrfs) cannot make the test look fast.
func testData(n int64) []byte {
	b := dio.Buf(n)
	r := rand.NewChaCha8([32]byte{'s', 'i', 't', 'e', 'b', 'o', 'x'})
	r.Read(b)
	return b
}
