package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/bench"
	"sitebox/internal/units"
)

// newBenchCacheCmd is `sitebox-bench cache`, the cache scale test side by
// side with XCache.
func newBenchCacheCmd() *cobra.Command {
	var (
		cfg                            bench.CacheConfig
		size, bandwidth, ram, disk, xb string
		setups                         string
		workDir, outDir                string
		quick                          bool
	)
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
			if quick {
				quickDefault(cmd, "files", func() { cfg.Files = 10 })
				quickDefault(cmd, "size", func() { size = "8MB" })
				quickDefault(cmd, "clients", func() { cfg.Clients = []int{1, 4} })
				quickDefault(cmd, "cold-max", func() { cfg.ColdMax = 15 * time.Second })
				quickDefault(cmd, "warm", func() { cfg.Warm = 5 * time.Second })
			}
			var err error
			if cfg.FileSize, err = units.ParseSize(size); err != nil || cfg.FileSize <= 0 {
				return fmt.Errorf("--size %q: want a size such as 50MB", size)
			}
			if cfg.Bandwidth, err = parseRate(bandwidth); err != nil {
				return fmt.Errorf("--bandwidth: %w", err)
			}
			for _, f := range []struct {
				name, val string
				dst       *int64
			}{{"ram", ram, &cfg.RAM}, {"disk", disk, &cfg.Disk}, {"xcache-blocksize", xb, &cfg.XcacheBlockSize}} {
				if f.val == "" {
					continue
				}
				if *f.dst, err = units.ParseSize(f.val); err != nil {
					return fmt.Errorf("--%s: %w", f.name, err)
				}
			}
			if cfg.Latency == 0 {
				cfg.Latency = -1 // an explicit 0: no added latency
			}
			cfg.Setups = strings.Split(setups, ",")
			run, err := startBenchRun(cmd, "cache", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Cache(run.ctx, cfg)
			if rep != nil && len(rep.Points) > 0 {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatCache(rep))
				files, cerr := bench.CacheCharts(rep, outDir)
				for _, f := range files {
					fmt.Fprintf(cmd.OutOrStdout(), "\nChart: %s", f)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				if cerr != nil && err == nil {
					err = cerr
				}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Files, "files", 100, "number of files on the origin")
	fl.StringVar(&size, "size", "50MB", "size of each file")
	fl.IntSliceVar(&cfg.Clients, "clients", []int{1, 2, 4, 10}, "parallel client counts")
	fl.StringVar(&setups, "setups", "direct,sitebox,xcache", "setups to run, comma-separated")
	fl.DurationVar(&cfg.Latency, "latency", 10*time.Millisecond, "delay added to each direction of the upstream link (round trip: twice this)")
	fl.StringVar(&bandwidth, "bandwidth", "150MB/s", `bandwidth of each upstream TCP connection ("0": unlimited)`)
	fl.DurationVar(&cfg.ColdMax, "cold-max", 45*time.Second, "longest cold phase: no cold copy starts after it")
	fl.DurationVar(&cfg.Warm, "warm", 20*time.Second, "length of the warm phase")
	fl.StringVar(&ram, "ram", "1GiB", "RAM limit of both caches (XCache 5.5 needs at least 1GiB)")
	fl.StringVar(&disk, "disk", "", "high disk watermark of both caches, low is 80% of it (default: twice the data set)")
	fl.StringVar(&xb, "xcache-blocksize", "", "XCache pfc.blocksize (default: XCache's, 128KiB in 5.5)")
	fl.IntVar(&cfg.XcachePrefetch, "xcache-prefetch", 0, "XCache pfc.prefetch in blocks (0: XCache's default; -1: off)")
	fl.StringVar(&cfg.MetricsPath, "metrics-path", "", "read the sitebox cache's hit ratio from this Prometheus path over plain HTTP (default: computed from the relay)")
	fl.StringVar(&workDir, "work-dir", "", "scratch directory; origin files are kept there for reruns (default: a temporary one, removed)")
	fl.StringVar(&outDir, "out", ".", "directory for the PNG charts")
	fl.BoolVar(&quick, "quick", false, "smoke test: 10 files of 8MB, clients 1,4, cold ≤ 15s, warm 5s (explicit flags win)")
	return cmd
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
