package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// benchRun is what every benchmark command starts from: this binary to
// serve with, a scratch directory (a temporary one, removed by done,
// unless --work-dir names one to keep) and a context that ends on Ctrl-C.
type benchRun struct {
	self, workDir string
	ctx           context.Context
	done          func()
}

func startBenchRun(name, workDir string) (*benchRun, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	remove := func() {}
	if workDir == "" {
		if workDir, err = os.MkdirTemp("", "sitebox-bench-"+name+"-"); err != nil {
			return nil, err
		}
		dir := workDir
		remove = func() { os.RemoveAll(dir) }
	}
	ctx, stop := signalContext()
	return &benchRun{self: self, workDir: filepath.Clean(workDir), ctx: ctx, done: func() { stop(); remove() }}, nil
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
