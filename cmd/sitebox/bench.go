package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"sitebox/internal/bench"
	"sitebox/internal/units"
)

func addBenchCommands(root *cobra.Command) {
	benchCmd := &cobra.Command{Use: "bench", Short: "Benchmarks that produce the tables site reports are made of"}

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
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if workDir == "" {
				if workDir, err = os.MkdirTemp("", "sitebox-bench-"); err != nil {
					return err
				}
				defer os.RemoveAll(workDir)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rs, err := bench.Origin(ctx, bench.OriginConfig{
				Sitebox: self, WorkDir: filepath.Clean(workDir), FileSize: n,
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
	benchCmd.AddCommand(origin, newBenchCacheCmd(), newBenchDirectorCmd(), newBenchAuthCmd())
	root.AddCommand(benchCmd)
}
