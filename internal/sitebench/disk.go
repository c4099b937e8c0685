package sitebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"
)

// DiskConfig describes the disk benchmark: N parallel dd-like writers,
// each writing its own file, then N readers reading those files back,
// for every writer count and I/O mode. Zero fields take the documented
// defaults.
type DiskConfig struct {
	// Dir is where to measure (required): a scratch subdirectory is made
	// in it for the test files and removed at the end, so it may be a
	// real pool with data in it.
	Dir       string
	FileSize  int64 // bytes per writer (default 1 GiB)
	BlockSize int64 // bytes per write and read call (default 1 MiB)
	Writers   []int // parallel writer counts (default 1, 2, 4, 8)
	// Direct lists the modes in the order run: true is O_DIRECT, false
	// is buffered I/O (default: both, O_DIRECT first).
	Direct []bool
	Out    io.Writer // progress lines (default: discarded)
}

// directAlign is the alignment O_DIRECT needs of buffers, offsets and
// lengths: the logical block size, 512 B or 4 KiB on today's devices.
const directAlign = 4096

func (c *DiskConfig) applyDefaults() {
	if c.FileSize <= 0 {
		c.FileSize = 1 << 30
	}
	if c.BlockSize <= 0 {
		c.BlockSize = 1 << 20
	}
	if len(c.Writers) == 0 {
		c.Writers = []int{1, 2, 4, 8}
	}
	if len(c.Direct) == 0 {
		c.Direct = []bool{true, false}
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *DiskConfig) validate() error {
	if c.Dir == "" {
		return errors.New("bench disk: no directory given")
	}
	if st, err := os.Stat(c.Dir); err != nil {
		return fmt.Errorf("bench disk: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("bench disk: %s is not a directory", c.Dir)
	}
	for _, n := range c.Writers {
		if n <= 0 {
			return fmt.Errorf("bench disk: writer count %d: want at least 1", n)
		}
	}
	if c.FileSize < c.BlockSize {
		return fmt.Errorf("bench disk: file size %d B is smaller than the block size %d B", c.FileSize, c.BlockSize)
	}
	if slices.Contains(c.Direct, true) {
		if c.BlockSize%directAlign != 0 {
			return fmt.Errorf("bench disk: block size %d B is not a multiple of %d B, which O_DIRECT needs", c.BlockSize, directAlign)
		}
		if c.FileSize%c.BlockSize != 0 {
			return fmt.Errorf("bench disk: file size %d B is not a whole number of %d B blocks, which O_DIRECT needs", c.FileSize, c.BlockSize)
		}
	}
	return nil
}

// DiskReport is the whole run.
type DiskReport struct {
	Config DiskConfig
	FSType string // the filesystem under Config.Dir, as statfs names it
	CPUs   int
	Points []DiskPoint // mode-major, in Config order
}

// DiskPoint is one writer count in one mode.
type DiskPoint struct {
	Writers     int
	Direct      bool
	Err         string // why the point failed; the phases are then partial
	Write, Read DiskPhase
}

// DiskPhase is the writers (or readers) of one point, all started at once.
type DiskPhase struct {
	Seconds float64 // first start to last finish, fdatasync included
	Bytes   int64
	MBps    float64 // aggregate: Bytes ÷ Seconds, in 10⁶ B/s
	// PerStream is the mean of each writer's own MB/s (its file ÷ its
	// time): below MBps ÷ N when the streams did not finish together.
	PerStream float64
	// CPU is the machine's busy share of all cores over the phase, in %,
	// from /proc/stat: it includes the kernel threads (writeback, ZFS
	// checksums and RAID-Z parity, md RAID6 parity) that do a pool's work
	// outside the benchmark process.
	CPU float64
}

// Disk runs the benchmark. Each point writes fresh files and removes them
// before the next, so no point reads another's data from the page cache.
// On cancellation it returns the points done so far with the error.
func Disk(ctx context.Context, cfg DiskConfig) (*DiskReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	fsType, free, err := diskStatfs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("bench disk: %w", err)
	}
	if need := int64(slices.Max(cfg.Writers)) * cfg.FileSize; free < need+need/20 {
		return nil, fmt.Errorf("bench disk: %s has %s free, the largest point needs %s (writers × size) plus 5 %%", cfg.Dir, MiB(free), MiB(need))
	}
	dir, err := os.MkdirTemp(cfg.Dir, "sitebox-bench-disk-")
	if err != nil {
		return nil, fmt.Errorf("bench disk: %w", err)
	}
	defer os.RemoveAll(dir)
	rep := &DiskReport{Config: cfg, FSType: fsType, CPUs: runtime.NumCPU()}
	fmt.Fprintf(cfg.Out, "bench disk: %s (%s), %s per writer, %s blocks\n", cfg.Dir, fsType, MiB(cfg.FileSize), MiB(cfg.BlockSize))
	for _, direct := range cfg.Direct {
		for _, n := range cfg.Writers {
			p := diskPoint(ctx, dir, &cfg, n, direct)
			rep.Points = append(rep.Points, p)
			fmt.Fprintf(cfg.Out, "  %-8s %2d writers: write %7.0f MB/s, read %7.0f MB/s, cpu %3.0f%% / %3.0f%% %s\n",
				modeName(direct), n, p.Write.MBps, p.Read.MBps, p.Write.CPU, p.Read.CPU, p.Err)
			if err := ctx.Err(); err != nil {
				return rep, fmt.Errorf("bench disk: %w", err)
			}
		}
	}
	return rep, nil
}

// modeName is how a mode reads in progress lines, tables and legends.
func modeName(direct bool) string {
	if direct {
		return "O_DIRECT"
	}
	return "buffered"
}

// diskPoint writes n files in parallel, reads them back in parallel and
// removes them.
func diskPoint(ctx context.Context, dir string, cfg *DiskConfig, n int, direct bool) DiskPoint {
	p := DiskPoint{Writers: n, Direct: direct}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s/%s-%d-of-%d", dir, modeName(direct), i, n)
	}
	defer func() {
		for _, name := range names {
			os.Remove(name)
		}
	}()
	var err error
	if p.Write, err = diskPhase(n, cfg.BlockSize, cfg.FileSize, func(i int, buf []byte) error {
		return writeFile(ctx, names[i], cfg.FileSize, buf, direct, i)
	}); err != nil {
		p.Err = "write: " + err.Error()
		return p
	}
	if p.Read, err = diskPhase(n, cfg.BlockSize, cfg.FileSize, func(i int, buf []byte) error {
		return readFile(ctx, names[i], cfg.FileSize, buf, direct)
	}); err != nil {
		p.Err = "read: " + err.Error()
	}
	return p
}

// diskPhase runs n streams at once, each with its own aligned buffer of
// bs bytes, and measures them. Every stream moves its whole file of size
// bytes or fails.
func diskPhase(n int, bs, size int64, stream func(i int, buf []byte) error) (DiskPhase, error) {
	var ph DiskPhase
	bufs := make([][]byte, n)
	for i := range bufs {
		b, err := alignedBuffer(int(bs))
		if err != nil {
			return ph, err
		}
		defer freeBuffer(b)
		bufs[i] = b
	}
	secs := make([]float64, n)
	errs := make([]error, n)
	cpu0, cpuErr := readCPUStat()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			t := time.Now()
			errs[i] = stream(i, bufs[i])
			secs[i] = time.Since(t).Seconds()
		})
	}
	wg.Wait()
	ph.Seconds = time.Since(start).Seconds()
	if cpu1, err := readCPUStat(); err == nil && cpuErr == nil {
		ph.CPU = cpu1.busySince(cpu0)
	}
	if err := errors.Join(errs...); err != nil {
		return ph, err
	}
	ph.Bytes = size * int64(n)
	ph.MBps = float64(ph.Bytes) / ph.Seconds / 1e6
	for _, s := range secs {
		ph.PerStream += float64(size) / s / 1e6 / float64(n)
	}
	return ph, nil
}
