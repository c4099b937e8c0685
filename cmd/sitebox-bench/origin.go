package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchOriginCmd is `sitebox-bench origin`: parallel xrdcp reads of
// one file from sitebox and from a real xrootd.
func newBenchOriginCmd() *cobra.Command {
	var (
		size    string
		clients []int
		rounds  int
		workDir string
	)
	origin := &cobra.Command{
		Use:   "origin",
		Short: "Parallel xrdcp reads of one file from sitebox and from a real xrootd, side by side",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := units.ParseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			run, err := startBenchRun(cmd, "origin", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			rs, err := bench.Origin(run.ctx, bench.OriginConfig{
				Sitebox: run.sitebox, WorkDir: run.workDir, FileSize: n,
				Clients: clients, Rounds: rounds, Out: cmd.ErrOrStderr(),
			})
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), bench.FormatOrigin(rs))
			return nil
		},
	}
	origin.Flags().StringVar(&size, "size", "1GiB", "size of the test file")
	origin.Flags().IntSliceVar(&clients, "clients", []int{1, 4, 16}, "parallel client counts")
	origin.Flags().IntVar(&rounds, "rounds", 3, "rounds per point (median reported)")
	origin.Flags().StringVar(&workDir, "work-dir", "", "scratch directory (default: a temporary one)")
	return origin
}
