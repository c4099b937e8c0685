package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchTPCCmd is `sitebox-bench tpc`: third-party copies between two
// boxes and between two xrootd servers, root:// and HTTP-TPC.
func newBenchTPCCmd() *cobra.Command {
	var (
		size    string
		rounds  int
		workDir string
		base    string
		protos  []string
		streams int
	)
	c := &cobra.Command{
		Use:   "tpc",
		Short: "Third-party copy (root:// and HTTP-TPC) between two sitebox boxes and between two xrootd servers, side by side",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if streams < 0 {
				return fmt.Errorf("--streams %d: want 1 or more (0: the header is not sent)", streams)
			}
			n, err := units.ParseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if base != "" {
				if base, err = filepath.Abs(base); err != nil {
					return fmt.Errorf("--baseline: %w", err)
				}
			}
			run, err := startBenchRun(cmd, "tpc", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			rs, err := bench.TPC(run.ctx, bench.TPCConfig{
				Sitebox: run.sitebox, WorkDir: run.workDir, FileSize: n, Rounds: rounds, Out: cmd.ErrOrStderr(),
				Baseline: base, Protos: protos, Streams: streams,
			})
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), bench.FormatTPC(rs, n, streams))
			return nil
		},
	}
	c.Flags().StringVar(&size, "size", "1GiB", "size of the copied file")
	c.Flags().IntVar(&rounds, "rounds", 3, "rounds per point (median reported)")
	c.Flags().StringVar(&base, "baseline", "", "another sitebox binary, run as a third pair in the same rounds (before/after)")
	c.Flags().StringSliceVar(&protos, "proto", nil, "transfer kinds to run: root, https (pull), push, put (default root and https)")
	c.Flags().IntVar(&streams, "streams", 0, "X-Number-Of-Streams of the HTTP-TPC copies, as FTS sends it (0: not sent, one stream)")
	c.Flags().StringVar(&workDir, "work-dir", "", "scratch directory (default: a temporary one)")
	return c
}
