package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

const benchCacheAnalysisLong = `The analysis mode of the cache test. The same origin and shaped link as
'sitebox-bench cache'; --threads readers, using the XRootD Python bindings,
each issue --readvs vector reads of --chunks × --chunk-size at random
offsets of random files. Each setup starts from an empty cache and runs
the same reads: cold, then --warm-passes times warm. The cold pass runs
--cold-passes times, each by a fresh server with an empty cache, in
rounds where the setups take turns at going first. Every setup's server
stays up after its last cold pass, and the warm passes take turns across
the setups, so each meets the machine in the same state. Rates are the
passes' medians. "local" is a sitebox
origin serving the same files from this machine's disk, the ceiling for a
warm cache.

A cache box serves worker nodes, whose cores are not its own. With
--reader-cpus auto (the default) on four or more CPUs, the readers run on
the last quarter of them and the servers, the link and the bench on the
rest; on fewer, everything shares every CPU, as with "none". A CPU list
("1", "2-3") gives the readers those CPUs. The report names the split.

With --workload uproot, the origin's files are ROOT files with one TTree
of --branches float64 branches (written with uproot.recreate, baskets of
all branches interleaved as in a real ntuple); each reader runs --jobs
jobs per pass, each opening a random file with uproot over root:// and
reading --read-branches random branches of it.

Prints vector reads (or jobs) per second per pass, cold ÷ direct, warm ÷
XCache, and the bytes that crossed the upstream link ÷ the bytes asked
for.`

// newBenchCacheAnalysisCmd is `sitebox-bench cache analysis`: scattered
// vector reads, as analysis jobs do, through each cache and direct.
func newBenchCacheAnalysisCmd() *cobra.Command {
	var (
		cfg                                                 bench.AnalysisConfig
		size, chunk, bandwidth, ram, setups, workDir, block string
	)
	cmd := &cobra.Command{
		Use:   "analysis",
		Short: "Random vector reads (as ROOT and uproot do) direct, through a sitebox cache, through XCache and from a local sitebox origin",
		Long:  benchCacheAnalysisLong,
		Example: `  sitebox-bench cache analysis
  sitebox-bench cache analysis --threads 8 --chunks 64 --chunk-size 16KiB --setups direct,sitebox
  sitebox-bench cache analysis --workload uproot --branches 200 --read-branches 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if cfg.FileSize, err = units.ParseSize(size); err != nil || cfg.FileSize <= 0 {
				return fmt.Errorf("--size %q: want a size such as 64MiB", size)
			}
			if cfg.ChunkSize, err = units.ParseSize(chunk); err != nil || cfg.ChunkSize <= 0 {
				return fmt.Errorf("--chunk-size %q: want a size such as 32KiB", chunk)
			}
			if cfg.Bandwidth, err = parseRate(bandwidth); err != nil {
				return fmt.Errorf("--bandwidth: %w", err)
			}
			if cfg.RAM, err = units.ParseSize(ram); err != nil {
				return fmt.Errorf("--ram: %w", err)
			}
			if block != "" {
				if cfg.BlockSize, err = units.ParseSize(block); err != nil {
					return fmt.Errorf("--block-size: %w", err)
				}
			}
			if cfg.Latency == 0 {
				cfg.Latency = -1 // an explicit 0: no added latency
			}
			cfg.Setups = strings.Split(setups, ",")
			if handled, err := linkNamespace(cmd); handled || err != nil {
				return err
			}
			run, err := startBenchRun(cmd, "cache-analysis", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.CacheAnalysis(run.ctx, cfg)
			if rep != nil && len(rep.Points) > 0 {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatAnalysis(rep))
			}
			return err
		},
	}
	addLinkFlag(cmd)
	fl := cmd.Flags()
	fl.IntVar(&cfg.Files, "files", 0, "number of files on the origin (default 8; 2 for the uproot workload)")
	fl.StringVar(&cfg.Workload, "workload", "readv", `"readv": random vector reads; "uproot": uproot jobs reading a few branches of a many-branch TTree`)
	fl.IntVar(&cfg.Branches, "branches", 200, "uproot workload: branches of the TTree")
	fl.IntVar(&cfg.ReadBranches, "read-branches", 4, "uproot workload: branches each job reads")
	fl.IntVar(&cfg.Entries, "entries", 100_000, "uproot workload: entries of the TTree")
	fl.IntVar(&cfg.Jobs, "jobs", 5, "uproot workload: jobs per reader and pass")
	fl.StringVar(&size, "size", "64MiB", "size of each file")
	fl.IntVar(&cfg.Threads, "threads", 4, "parallel readers")
	fl.IntVar(&cfg.Readvs, "readvs", 100, "vector reads per reader and pass")
	fl.IntVar(&cfg.WarmPasses, "warm-passes", 3, "warm passes; the warm rate is their median")
	fl.IntVar(&cfg.ColdPasses, "cold-passes", 3, "cold passes, each from a fresh server with an empty cache; the cold rate is their median")
	fl.IntVar(&cfg.Chunks, "chunks", 16, "chunks per vector read")
	fl.StringVar(&chunk, "chunk-size", "32KiB", "bytes per chunk")
	fl.StringVar(&setups, "setups", "direct,sitebox,xcache,local", "setups to run, comma-separated")
	fl.DurationVar(&cfg.Latency, "latency", 10*time.Millisecond, "delay added to each direction of the upstream link")
	fl.StringVar(&bandwidth, "bandwidth", "150MB/s", `bandwidth of each upstream TCP connection ("0": unlimited)`)
	fl.StringVar(&ram, "ram", "1GiB", "RAM limit of both caches (XCache 5.5 needs at least 1GiB)")
	fl.StringVar(&cfg.Python, "python", "", "Python with the XRootD bindings (default: $SITEBOX_PYTHON, else python3)")
	fl.StringVar(&block, "block-size", "", "the sitebox cache's block_size (default: its own)")
	fl.Uint64Var(&cfg.Seed, "seed", 1, "seed of the random offsets")
	fl.StringVar(&cfg.ReaderCPUs, "reader-cpus", "auto", `CPUs of the readers, the servers on the rest: "auto" (the last quarter, on 4 or more CPUs), "none" (all share every CPU) or a CPU list such as "1"`)
	fl.StringVar(&workDir, "work-dir", "", "scratch directory; origin files are kept there for reruns (default: a temporary one, removed)")
	return cmd
}
