package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchMountCmd is `sitebox-bench mount`: `sitebox mount` side by side
// with local disk, xrootdfs and rclone mount over WebDAV.
func newBenchMountCmd() *cobra.Command {
	var f mountFlags
	cmd := &cobra.Command{
		Use:   "mount",
		Short: "POSIX mounts over a slow link: sitebox mount, xrootdfs and rclone mount (WebDAV) side by side with local disk",
		Long: `One sitebox origin serves a generated data set over root:// and https://
through Toxiproxy, which adds each --rtt to every round trip. At each round
trip time every setup mounts it afresh (empty caches) for each workload:

  build   an include-heavy C tree compiled with make -j2 (objects on local
          disk), cold (fresh mount) then warm (again on the same mount);
  sweep   the metadata calls of a CMSSW build divided by --scale: opens,
          stats, lstats and readlinks over the tree, cold then warm;
  seq     a large file read start to end in 1 MiB reads;
  fio     fio random 4 KiB reads of a file read once before;
  uproot  4 branches of a 200-branch tree read by path by 1, 2, 4, 8
          reader processes together;
  find    find(1) over --find-entries empty files (a million), local and
          sitebox only: its time and the mount's peak memory;
  fiorw   (only when asked for) fio sequential write and read (1 MiB
          blocks) and random 4 KiB reads and writes of a new file on a
          writable mount.

Setups: local (the origin's directory), sitebox (sitebox mount over
root://), xrootdfs (over root://, the same server), rclone (rclone mount
over WebDAV with a full VFS cache), root (no mount: xrdcp and uproot with
root:// URLs over the same link), and through a sitebox cache box in
front of the origin (a fresh, empty one for each measurement):
sitebox-cache (sitebox mount of the cache box, no --cache-dir) and
root-cache (xrdcp and uproot through it), the sequential read's target
being "≥ 0.9× xrdcp through the same cache". --protection runs the sitebox setup at
each level given (sitebox mount --protection: auth, integrity with
checked pages, privacy over roots://), one row each. A sitebox without a mount command is
reported as not available. Needs root, /dev/fuse, xrootdfs, rclone, fio,
make, cc, xrdcp and Python with uproot.`,
		Example: `  sitebox-bench mount                         # 0, 10 and 25 ms
  sitebox-bench mount --quick
  sitebox-bench mount --rtt 10ms --setups local,xrootdfs --workloads build,sweep
  # the mount and xrdcp through the same (cold) cache box
  sitebox-bench mount --setups sitebox-cache,root-cache --workloads seq
  # fio read and write per protection level
  sitebox-bench mount --quick --setups local,sitebox --workloads seq,fio,fiorw --protection auth,integrity,privacy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.parse(cmd); err != nil {
				return err
			}
			run, err := startBenchRun(cmd, "mount", f.workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg := f.cfg
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Mount(run.ctx, cfg)
			if rep != nil && len(rep.Points) > 0 {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatMount(rep))
			}
			return err
		},
	}
	f.register(cmd)
	return cmd
}

// mountFlags are `sitebox-bench mount`'s flags: the config they fill and
// the lists and sizes given as text.
type mountFlags struct {
	cfg                       bench.MountConfig
	rtts                      []time.Duration
	setups, workloads         string
	protections               string
	seqSize, fioSize, workDir string
	quick                     bool
}

// parse applies --quick (explicit flags win) and fills f.cfg.
func (f *mountFlags) parse(cmd *cobra.Command) error {
	cfg := &f.cfg
	if f.quick {
		quickDefault(cmd, "rtt", func() { f.rtts = []time.Duration{10 * time.Millisecond} })
		quickDefault(cmd, "scale", func() { cfg.Scale = 500 })
		quickDefault(cmd, "sources", func() { cfg.Sources = 20 })
		quickDefault(cmd, "headers", func() { cfg.Headers = 10 })
		quickDefault(cmd, "seq-size", func() { f.seqSize = "32MiB" })
		quickDefault(cmd, "fio-size", func() { f.fioSize = "8MiB" })
		quickDefault(cmd, "fio-time", func() { cfg.FioTime = 2 * time.Second })
		quickDefault(cmd, "readers", func() { cfg.Readers = []int{1, 2} })
		quickDefault(cmd, "entries", func() { cfg.Entries = 20_000 })
		quickDefault(cmd, "jobs", func() { cfg.Jobs = 1 })
		quickDefault(cmd, "find-entries", func() { cfg.FindEntries = 20_000 })
	}
	var err error
	if cfg.SeqSize, err = units.ParseSize(f.seqSize); err != nil {
		return fmt.Errorf("--seq-size: %w", err)
	}
	if cfg.FioSize, err = units.ParseSize(f.fioSize); err != nil {
		return fmt.Errorf("--fio-size: %w", err)
	}
	cfg.RTTs, cfg.Setups, cfg.Workloads = f.rtts, strings.Split(f.setups, ","), strings.Split(f.workloads, ",")
	cfg.Protections = strings.Split(f.protections, ",")
	return nil
}

func (f *mountFlags) register(cmd *cobra.Command) {
	cfg := &f.cfg
	fl := cmd.Flags()
	fl.DurationSliceVar(&f.rtts, "rtt", []time.Duration{0, 10 * time.Millisecond, 25 * time.Millisecond}, "round trip times the link adds")
	fl.StringVar(&f.setups, "setups", "local,sitebox,xrootdfs,rclone,root,sitebox-cache,root-cache", "setups to run, comma-separated")
	fl.StringVar(&f.workloads, "workloads", "build,sweep,seq,fio,uproot,find", "workloads to run, comma-separated (and fiorw)")
	fl.StringVar(&f.protections, "protection", "auth", "protection levels the sitebox setup runs at, comma-separated: auth, integrity, privacy")
	fl.IntVar(&cfg.Scale, "scale", 100, "divide the CMSSW build's metadata calls (24k opens, 24k stats, 306k lstats, 1.5k readlinks) by this")
	fl.IntVar(&cfg.Sources, "sources", 40, "C sources of the generated tree")
	fl.IntVar(&cfg.WarmBuilds, "warm-builds", 3, "warm builds after the cold one (their median is the warm figure)")
	fl.IntVar(&cfg.Headers, "headers", 20, "headers in each of its 4 include directories")
	fl.StringVar(&f.seqSize, "seq-size", "256MiB", "size of the sequentially read file")
	fl.StringVar(&f.fioSize, "fio-size", "64MiB", "size of fio's file")
	fl.DurationVar(&cfg.FioTime, "fio-time", 5*time.Second, "how long fio reads")
	fl.IntSliceVar(&cfg.Readers, "readers", []int{1, 2, 4, 8}, "uproot reader process counts")
	fl.IntVar(&cfg.Entries, "entries", 100_000, "entries of the uproot tree")
	fl.IntVar(&cfg.Jobs, "jobs", 2, "uproot jobs per reader process")
	fl.IntVar(&cfg.FindEntries, "find-entries", 1_000_000, "empty files find(1) walks (local and sitebox only), in directories of 1,000")
	fl.StringVar(&f.workDir, "work-dir", "", "scratch directory; the origin's files are kept there for reruns (default: a temporary one, removed)")
	fl.BoolVar(&f.quick, "quick", false, "smoke test: 10 ms only, a small tree, scale 500, 32 MiB file, readers 1,2, one job each (explicit flags win)")
}
