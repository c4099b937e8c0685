package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchCacheCmd is `sitebox-bench cache`, the cache scale test side by
// side with XCache.
func newBenchCacheCmd() *cobra.Command {
	var f cacheFlags
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Many xrdcp clients through a sitebox cache and through XCache over a slow upstream link, side by side with direct reads",
		Long: `Reproduces the Tier-3-in-a-box cache test on one machine. A real xrootd
origin serves --files random files behind Toxiproxy (--latency added each
way, --bandwidth per TCP connection) and a relay that counts the bytes
crossing that link. For each setup (direct to the origin, a sitebox cache,
XCache with the same RAM and disk limits) and each client count, starting
from an empty cache:

  cold phase  the clients share a queue of every file once and copy them with
              xrdcp to /dev/null, until the queue is empty (no copy starts
              after --cold-max);
  warm phase  for --warm, each client copies random files among those read.

Prints aggregate MB/s per phase, hit ratio, upstream bytes ÷ unique bytes
and the cache's peak RSS as a Markdown table, and writes one PNG chart of
MB/s over time per client count into --out.`,
		Example: `  sitebox-bench cache                        # the full test, about 10-15 minutes
  sitebox-bench cache --quick --setups direct,xcache
  sitebox-bench cache --clients 4 --size 100MB --latency 20ms --bandwidth 50MB/s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.parse(cmd); err != nil {
				return err
			}
			if handled, err := linkNamespace(cmd); handled || err != nil {
				return err
			}
			run, err := startBenchRun(cmd, "cache", f.workDir)
			if err != nil {
				return err
			}
			defer run.done()
			f.cfg.Sitebox, f.cfg.WorkDir, f.cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Cache(run.ctx, f.cfg)
			if rep != nil && len(rep.Points) > 0 {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatCache(rep))
				files, cerr := bench.CacheCharts(rep, f.outDir)
				for _, file := range files {
					fmt.Fprintf(cmd.OutOrStdout(), "\nChart: %s", file)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				if cerr != nil && err == nil {
					err = cerr
				}
			}
			return err
		},
	}
	f.register(cmd)
	addLinkFlag(cmd)
	cmd.AddCommand(newBenchCacheAnalysisCmd(), newBenchCacheFilesCmd())
	return cmd
}

// cacheFlags are `sitebox-bench cache`'s flags: the config they fill and
// the sizes and rates given as text.
type cacheFlags struct {
	cfg                            bench.CacheConfig
	size, bandwidth, ram, disk, xb string
	blockSize                      string
	setups                         string
	workDir, outDir                string
	quick                          bool
}

func (f *cacheFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.cfg.Files, "files", 100, "number of files on the origin")
	fl.StringVar(&f.size, "size", "50MB", "size of each file")
	fl.IntSliceVar(&f.cfg.Clients, "clients", []int{1, 2, 4, 10}, "parallel client counts")
	fl.StringVar(&f.setups, "setups", "direct,sitebox,xcache", "setups to run, comma-separated")
	fl.DurationVar(&f.cfg.Latency, "latency", 10*time.Millisecond, "delay added to each direction of the upstream link (round trip: twice this)")
	fl.StringVar(&f.bandwidth, "bandwidth", "150MB/s", `bandwidth of each upstream TCP connection ("0": unlimited)`)
	fl.DurationVar(&f.cfg.ColdMax, "cold-max", 45*time.Second, "longest cold phase: no cold copy starts after it")
	fl.DurationVar(&f.cfg.Warm, "warm", 20*time.Second, "length of the warm phase")
	fl.StringVar(&f.ram, "ram", "1GiB", "RAM limit of both caches (XCache 5.5 needs at least 1GiB)")
	fl.StringVar(&f.disk, "disk", "", "high disk watermark of both caches, low is 80% of it (default: twice the data set)")
	fl.StringVar(&f.xb, "xcache-blocksize", "", "XCache pfc.blocksize (default: XCache's, 128KiB in 5.5)")
	fl.StringVar(&f.blockSize, "block-size", "", "the sitebox cache's block_size (default: its own)")
	fl.IntVar(&f.cfg.XcachePrefetch, "xcache-prefetch", 0, "XCache pfc.prefetch in blocks (0: XCache's default; -1: off)")
	fl.StringVar(&f.cfg.MetricsPath, "metrics-path", "", "read the sitebox cache's hit ratio from this Prometheus path over plain HTTP (default: computed from the relay)")
	fl.StringVar(&f.workDir, "work-dir", "", "scratch directory; origin files are kept there for reruns (default: a temporary one, removed)")
	fl.StringVar(&f.outDir, "out", ".", "directory for the PNG charts")
	fl.BoolVar(&f.quick, "quick", false, "smoke test: 10 files of 8MB, clients 1,4, cold ≤ 15s, warm 5s (explicit flags win)")
}

// parse applies --quick and turns the text flags into f.cfg.
func (f *cacheFlags) parse(cmd *cobra.Command) error {
	cfg := &f.cfg
	if f.quick {
		quickDefault(cmd, "files", func() { cfg.Files = 10 })
		quickDefault(cmd, "size", func() { f.size = "8MB" })
		quickDefault(cmd, "clients", func() { cfg.Clients = []int{1, 4} })
		quickDefault(cmd, "cold-max", func() { cfg.ColdMax = 15 * time.Second })
		quickDefault(cmd, "warm", func() { cfg.Warm = 5 * time.Second })
	}
	var err error
	if cfg.FileSize, err = units.ParseSize(f.size); err != nil || cfg.FileSize <= 0 {
		return fmt.Errorf("--size %q: want a size such as 50MB", f.size)
	}
	if cfg.Bandwidth, err = parseRate(f.bandwidth); err != nil {
		return fmt.Errorf("--bandwidth: %w", err)
	}
	for _, s := range []struct {
		name, val string
		dst       *int64
	}{{"ram", f.ram, &cfg.RAM}, {"disk", f.disk, &cfg.Disk}, {"xcache-blocksize", f.xb, &cfg.XcacheBlockSize}, {"block-size", f.blockSize, &cfg.BlockSize}} {
		if s.val == "" {
			continue
		}
		if *s.dst, err = units.ParseSize(s.val); err != nil {
			return fmt.Errorf("--%s: %w", s.name, err)
		}
	}
	if cfg.Latency == 0 {
		cfg.Latency = -1 // an explicit 0: no added latency
	}
	cfg.Setups = strings.Split(f.setups, ",")
	return nil
}

// parseRate reads "150MB/s" (or "150MB") as bytes per second; "0" is
// unlimited, returned as -1.
func parseRate(s string) (int64, error) {
	n, err := units.ParseSize(strings.TrimSuffix(strings.TrimSpace(s), "/s"))
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return -1, nil
	}
	return n, nil
}
