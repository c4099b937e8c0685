package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// addBenchCommands registers the benchmarks an operator runs against
// their own site: disks, transfers and the federation's site-to-site
// matrix. The comparisons against xrootd, XCache and cmsd, which start
// those programs, are a separate tool, sitebox-bench.
func addBenchCommands(root *cobra.Command) {
	benchCmd := &cobra.Command{Use: "bench", Short: "Benchmarks that produce the tables site reports are made of"}
	benchCmd.AddCommand(newBenchDiskCmd(), newBenchTransferCmd(), newBenchMatrixCmd())
	root.AddCommand(benchCmd)
}

// quickDefault applies one of --quick's settings unless its flag was
// given: explicit flags win.
func quickDefault(cmd *cobra.Command, flag string, apply func()) {
	if !cmd.Flags().Changed(flag) {
		apply()
	}
}

// printTableAndChart prints a benchmark's table, then draws its chart and
// names the file; the run's own error (an interrupted run still has
// points to show) wins over the chart's.
func printTableAndChart(out io.Writer, table string, chart func() (string, error), runErr error) error {
	fmt.Fprint(out, table)
	file, err := chart()
	if err != nil {
		return errors.Join(runErr, err)
	}
	fmt.Fprintf(out, "\nChart: %s\n", file)
	return runErr
}
