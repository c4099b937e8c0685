package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// benchRun is what every benchmark command starts from: the sitebox
// binary to serve with, a scratch directory (a temporary one, removed by
// done, unless --work-dir names one to keep) and a context that ends on
// Ctrl-C.
type benchRun struct {
	sitebox, workDir string
	ctx              context.Context
	done             func()
}

func startBenchRun(cmd *cobra.Command, name, workDir string) (*benchRun, error) {
	flag, _ := cmd.Flags().GetString("sitebox")
	sitebox, err := findSitebox(flag)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return &benchRun{sitebox: sitebox, workDir: filepath.Clean(workDir), ctx: ctx, done: func() { stop(); remove() }}, nil
}

// findSitebox is the binary the benchmarks serve with: --sitebox, else
// the sitebox installed next to this program (scripts/setup.sh builds
// both into bin/), else sitebox on PATH.
func findSitebox(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if self, err := os.Executable(); err == nil {
		next := filepath.Join(filepath.Dir(self), "sitebox")
		if st, err := os.Stat(next); err == nil && !st.IsDir() {
			return next, nil
		}
	}
	if p, err := exec.LookPath("sitebox"); err == nil {
		return filepath.Abs(p)
	}
	return "", errors.New("no sitebox binary: build it next to sitebox-bench, put it on PATH or pass --sitebox")
}

// quickDefault applies one of --quick's settings unless its flag was
// given: explicit flags win.
func quickDefault(cmd *cobra.Command, flag string, apply func()) {
	if !cmd.Flags().Changed(flag) {
		apply()
	}
}
