package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// MountConfig is the POSIX mount benchmark: `sitebox mount` side by side
// with local disk, xrootdfs (over root://) and rclone mount (over
// WebDAV), all reading one sitebox origin through Toxiproxy at each round
// trip time. The workloads are a build (a generated include-heavy C tree
// compiled with make -j2, outputs on local disk), a metadata sweep in the
// proportions of a CMSSW build (24k opens, 24k stats, 306k lstats, 1.5k
// readlinks, divided by Scale), find(1) over a million names, a sequential read of a large file, fio
// random 4 KiB reads of a file read once before, and uproot reading 4
// branches of a 200-branch tree by path with several reader processes.
// The "root" setup is the same reads over root:// without a mount
// (xrdcp, uproot with root:// URLs), the baseline of the mount's targets.
// "sitebox-cache" and "root-cache" are the mount and those clients
// reading through a sitebox cache box in front of the origin instead.
type MountConfig struct {
	Sitebox string          // sitebox binary (its `mount` command and the origin)
	WorkDir string          // scratch; the origin's generated files are kept for reruns
	Python  string          // with uproot (default $SITEBOX_PYTHON, else python3)
	RTTs    []time.Duration // round trip times added by Toxiproxy (default 0, 10ms, 25ms)
	// Setups default to local, sitebox, xrootdfs, rclone, root,
	// sitebox-cache and root-cache (the last two through a cache box).
	Setups []string

	Scale   int // divisor of the CMSSW proportions (default 100)
	Sources int // C files in the generated tree (default 40)
	// WarmBuilds is how many times the warm build runs after the cold
	// one; its figure is their median (default 3): a warm build lasts
	// well under a second, where one burst of other work moves it by a
	// third.
	WarmBuilds int
	Headers    int   // headers in each of the 4 include directories (default 20)
	SeqSize    int64 // the large file (default 256 MiB)
	FioSize    int64 // fio's file (default 64 MiB)
	FioTime    time.Duration
	Readers    []int // uproot reader processes (default 1, 2, 4, 8)
	Entries    int   // entries of the uproot tree (default 100,000)
	Jobs       int   // uproot jobs per reader (default 2)
	// FindEntries is the number of empty files the find workload walks
	// (default 1,000,000, in directories of 1,000).
	FindEntries int
	Out         io.Writer
	Workloads   []string // default build, sweep, seq, fio, uproot, find; fiorw on request
	// Protections are the levels the sitebox setup runs at, one row each
	// (`sitebox mount --protection`: auth, integrity, privacy; privacy
	// over roots://); default auth.
	Protections []string
}

// MountPoint is one setup at one round trip time. A zero figure was not
// measured (the setup does not do that workload, or it failed: Errs).
type MountPoint struct {
	RTT                  time.Duration
	Setup                string
	BuildCold, BuildWarm time.Duration
	SweepCold, SweepWarm time.Duration
	SweepNote            string // what the sweep could not do (readlink on xrootdfs)
	SeqMBps              float64
	FioIOPS              float64
	Uproot               map[int]float64 // reader processes → MB/s of arrays read
	Find                 time.Duration   // find(1) over FindEntries names
	FindRSS              int64           // the mount process's peak RSS after it
	// Protection is the sitebox setup's --protection ("" for the others).
	Protection string
	// RW is the fiorw workload's figures.
	RW   FioRW
	Errs []string
	// Unavailable says why the setup was not run at all (no `sitebox
	// mount` in the binary yet).
	Unavailable string
}

// MountReport is a run.
type MountReport struct {
	Config MountConfig
	Points []MountPoint
}

var mountSetups = []string{"local", "sitebox", "xrootdfs", "rclone", "root", siteboxCacheSetup, rootCacheSetup}

var mountWorkloads = []string{"build", "sweep", "seq", "fio", "uproot", "find"}

// mountExtraWorkloads run only when asked for.
var mountExtraWorkloads = []string{"fiorw"}

var mountProtections = []string{"auth", "integrity", "privacy"}

func (c *MountConfig) applyDefaults() {
	if len(c.RTTs) == 0 {
		c.RTTs = []time.Duration{0, 10 * time.Millisecond, 25 * time.Millisecond}
	}
	if len(c.Setups) == 0 {
		c.Setups = mountSetups
	}
	if len(c.Workloads) == 0 {
		c.Workloads = mountWorkloads
	}
	if len(c.Protections) == 0 {
		c.Protections = []string{"auth"}
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Scale, 100)
	def(&c.Sources, 40)
	def(&c.WarmBuilds, 3)
	def(&c.Headers, 20)
	def(&c.Entries, 100_000)
	def(&c.Jobs, 2)
	def(&c.FindEntries, 1_000_000)
	if c.SeqSize <= 0 {
		c.SeqSize = 256 << 20
	}
	if c.FioSize <= 0 {
		c.FioSize = 64 << 20
	}
	if c.FioTime <= 0 {
		c.FioTime = 5 * time.Second
	}
	if len(c.Readers) == 0 {
		c.Readers = []int{1, 2, 4, 8}
	}
	if c.Python == "" {
		c.Python = defaultPython()
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *MountConfig) validate() error {
	if err := needBinAndDir("bench mount", c.Sitebox, c.WorkDir); err != nil {
		return err
	}
	for _, s := range c.Setups {
		if !slices.Contains(mountSetups, s) {
			return fmt.Errorf("setup %q: want one of %v", s, mountSetups)
		}
	}
	for _, w := range c.Workloads {
		if !slices.Contains(mountWorkloads, w) && !slices.Contains(mountExtraWorkloads, w) {
			return fmt.Errorf("workload %q: want one of %v", w, slices.Concat(mountWorkloads, mountExtraWorkloads))
		}
	}
	for _, l := range c.Protections {
		if !slices.Contains(mountProtections, l) {
			return fmt.Errorf("protection %q: want one of %v", l, mountProtections)
		}
	}
	if c.Scale > cmsswReadlinks {
		return fmt.Errorf("scale %d: at most %d (the build's readlinks, divided by it, must leave one)", c.Scale, cmsswReadlinks)
	}
	for _, r := range c.RTTs {
		if r < 0 || r%time.Millisecond != 0 {
			return fmt.Errorf("round trip %v: want a whole number of milliseconds (Toxiproxy's unit)", r)
		}
	}
	return nil
}

func (c *MountConfig) does(workload string) bool { return slices.Contains(c.Workloads, workload) }

// Mount runs the benchmark: one origin and one shaped link for the whole
// run, each round trip time in turn, each setup with fresh mounts.
func Mount(ctx context.Context, cfg MountConfig) (*MountReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	data := cfg.dataDir()
	files, err := prepareMountData(ctx, &cfg, data)
	if err != nil {
		return nil, err
	}
	env, err := startMountEnv(ctx, &cfg, data)
	if err != nil {
		return nil, err
	}
	defer env.stop()
	rep := &MountReport{Config: cfg}
	for _, rtt := range cfg.RTTs {
		if err := env.setRTT(ctx, rtt); err != nil {
			return rep, err
		}
		for _, setup := range cfg.Setups {
			levels := []string{""}
			if setup == "sitebox" {
				levels = cfg.Protections
			}
			for _, level := range levels {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				fmt.Fprintf(cfg.Out, "bench mount: %s at %v round trip\n", MountPoint{Setup: setup, Protection: level}.label(), rtt)
				p := env.runSetup(ctx, mountKind{setup: setup, protection: level}, files)
				p.RTT = rtt
				for _, e := range p.Errs {
					fmt.Fprintf(cfg.Out, "  error: %s\n", e)
				}
				rep.Points = append(rep.Points, p)
			}
		}
	}
	return rep, nil
}

// label names the point's setup in the tables: the sitebox setup's
// protection beside it, but for auth (the default, and the earlier
// reports' plain "sitebox").
func (p MountPoint) label() string {
	if p.Protection == "" || p.Protection == "auth" {
		return p.Setup
	}
	return p.Setup + " " + p.Protection
}
