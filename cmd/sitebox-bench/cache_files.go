package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"sitebox/test/bench"
)

// newBenchCacheFilesCmd is `sitebox-bench cache files`: how a cache
// holding many cached files starts.
func newBenchCacheFilesCmd() *cobra.Command {
	var (
		cfg     bench.FilesConfig
		workDir string
	)
	cmd := &cobra.Command{
		Use:   "files",
		Short: "A sitebox cache holding 10^4 to 10^6 cached files: time to the first byte, memory, a purge round, a 'cache ls' page",
		Long: `The many-files mode of the cache test. For each --counts N, a cache
directory is filled with N small cached files (kept in --work-dir for
reruns: a million takes a few minutes and two million inodes), then
'sitebox serve' starts on it and a client reads one of them until it gets
its first byte. Prints the time from start to that byte, to every cached
file being registered, the process's RSS then (and its peak), the time
of the purge round that evicts the 100 least recently used files (the
files watermarks are set just under N; the round follows the start-up
scan), and the best of five 'cache ls' pages of 1000 files from
the middle of the listing, through the admin socket.`,
		Example: `  sitebox-bench cache files --counts 10000,100000 --work-dir /scratch/bench`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			run, err := startBenchRun(cmd, "cache-files", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			pts, err := bench.CacheFiles(run.ctx, cfg)
			if len(pts) > 0 {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatFiles(pts))
			}
			return err
		},
	}
	cmd.Flags().IntSliceVar(&cfg.Counts, "counts", []int{10_000, 100_000, 1_000_000}, "numbers of cached files")
	cmd.Flags().StringVar(&workDir, "work-dir", "", "scratch directory; the cache directories are kept there for reruns (default: a temporary one, removed)")
	return cmd
}
