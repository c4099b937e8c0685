package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"sitebox/test/bench"
)

// newBenchJobsCmd is `sitebox-bench jobs`: how fast the job router
// accepts and starts short jobs in its local domain.
func newBenchJobsCmd() *cobra.Command {
	var (
		cfg     bench.JobsConfig
		workDir string
		quick   bool
	)
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "Submit and run N short jobs in a box's local domain: jobs/s accepted and started, the scheduler's CPU and RSS",
		Long: `Starts a sitebox box with the job router (a local domain of --cpus cores,
its site issuer for the tokens) and submits N jobs, each /bin/true with
1 CPU and 64 MB, through its API at /api/v1/jobs:

  phase 1  one request per job from --clients concurrent clients
  phase 2  one submission of N jobs (a submit file's "queue N"), after
           phase 1 has drained; --batch=false skips it

Each phase waits until all its jobs have ended, polling the job list
every 200 ms. Prints, as Markdown: jobs/s accepted (to the last 201),
jobs/s started (first to last start, the box's clock) and completed, the
box's CPU per job and peak RSS, with the targets (≥ 200 accepted/s,
≥ 50 started/s) marked. Progress goes to stderr.

To profile the box, set SITEBOX_CPUPROFILE=/path/cpu.pprof in the
environment: the box inherits it and writes the profile when stopped.`,
		Example: `  sitebox-bench jobs                  # 2000 jobs, 8 clients, 2 CPUs
  sitebox-bench jobs --quick          # 200 jobs
  sitebox-bench jobs --jobs 5000 --clients 16 --cpus 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if quick {
				quickDefault(cmd, "jobs", func() { cfg.Jobs = 200 })
			}
			switch {
			case cfg.Jobs <= 0:
				return fmt.Errorf("--jobs %d: want at least 1", cfg.Jobs)
			case cfg.Clients <= 0:
				return fmt.Errorf("--clients %d: want at least 1", cfg.Clients)
			case cfg.CPUs <= 0:
				return fmt.Errorf("--cpus %d: want at least 1", cfg.CPUs)
			case cfg.Timeout <= 0:
				return fmt.Errorf("--timeout %v: want a positive duration", cfg.Timeout)
			}
			run, err := startBenchRun(cmd, "jobs", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			cfg.Sitebox, cfg.WorkDir, cfg.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
			rep, err := bench.Jobs(run.ctx, cfg)
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), bench.FormatJobs(rep))
			if !rep.Complete() {
				return errors.New("bench jobs: not every job completed (see the report)")
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&cfg.Jobs, "jobs", 2000, "jobs per phase")
	fl.IntVar(&cfg.Clients, "clients", 8, "concurrent clients in the one-request-per-job phase")
	fl.IntVar(&cfg.CPUs, "cpus", 2, "cores of the box's local domain")
	fl.BoolVar(&cfg.Batch, "batch", true, "also measure one submission of all the jobs")
	fl.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "per phase, how long to wait for the jobs to end")
	fl.StringVar(&workDir, "work-dir", "", "scratch directory; the box's state goes to DIR/box, replaced each run (default: a temporary one, removed)")
	fl.BoolVar(&quick, "quick", false, "smoke test: 200 jobs (an explicit --jobs wins)")
	return cmd
}
