package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"sitebox/test/bench"
)

// newBenchDirectorCmd is `sitebox-bench director`: redirects per second
// and the latency of one redirect, the sitebox director side by side with
// a real cmsd manager.
func newBenchDirectorCmd() *cobra.Command {
	var (
		cfg     bench.DirectorConfig
		setups  string
		workDir string
	)
	cmd := &cobra.Command{
		Use:   "director",
		Short: "Redirects per second and the latency of one redirect: the sitebox director against a real cmsd manager",
		Long: `Starts one real xrootd data server holding --files small files, with its
cmsd subscribed to a cmsd + xrootd manager, and a sitebox director that
lists the data server as a static server. For each client count, each
redirector is warmed up (every file opened once) and then loaded for
--duration: every client, on its own connection, sends kXR_open (read)
for the files round-robin, one at a time, and counts the kXR_redirect
answers without following them (kXR_wait is honoured and counted).
Which redirector goes first alternates per client count.

Prints redirects/s, p50 and p99 of one open→redirect round trip, the
sitebox ÷ cmsd ratio, the latency one redirect adds over a kXR_stat the
data server answers itself, and both redirectors' peak RSS as a Markdown
table.`,
		Example: `  sitebox-bench director                      # about 2 minutes
  sitebox-bench director --setups cmsd --clients 1,4 --duration 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Setups = strings.Split(setups, ",")
			run, err := startBenchRun(cmd, "director", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Director(run.ctx, cfg)
			if rep != nil && (len(rep.Points) > 0 || rep.Floor.Setup != "") {
				fmt.Fprint(cmd.OutOrStdout(), bench.FormatDirector(rep))
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&cfg.Clients, "clients", []int{1, 4, 16}, "parallel client counts")
	fl.DurationVar(&cfg.Duration, "duration", 0, "measurement per setup and client count (default 10s)")
	fl.IntVar(&cfg.Files, "files", 100, "number of files on the data server, opened round-robin")
	fl.StringVar(&setups, "setups", "sitebox,cmsd", "redirectors to measure, comma-separated")
	fl.StringVar(&workDir, "work-dir", "", "scratch directory (default: a temporary one, removed)")
	return cmd
}
