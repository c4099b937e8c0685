package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return &benchRun{self: self, workDir: filepath.Clean(workDir), ctx: ctx, done: func() { stop(); remove() }}, nil
}
