package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/test/bench"
)

// newBenchDirectorCmd is `sitebox-bench director`: redirects per second
// and the latency of one redirect, the sitebox director side by side with
// a real cmsd manager.
func newBenchDirectorCmd() *cobra.Command {
	var (
		cfg      bench.DirectorConfig
		setups   string
		workDir  string
		scale    bench.DirectorScaleConfig
		holdings bool
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
table.

With --scale N the director is measured at scale instead: N simulated
data servers in --sites sites (each a root:// server on its own loopback
port and an approved federation member sending signed ads every
--interval) advertise to one sitebox director. Prints the ads absorbed
per second and whether it keeps up, locate latency for files held by 1,
10 and 100 servers and for missing files, redirects/s with --clients
clients in --rounds rounds (each the director, then a cmsd manager with
one data server unless --cmsd=false, under the same load), the
director's CPU time per redirect and its peak RSS.

With --tree the servers advertise to a three-level tree of directors
instead: a site director per site, --regions regional directors (default
5, more if a region would have over 1000 servers) and the top director,
each a sitebox serve approved by the one above and advertising to it.
Locates and redirects go to the top director; the report adds each
level's ads absorbed per second, CPU and largest peak RSS.`,
		Example: `  sitebox-bench director                      # about 2 minutes
  sitebox-bench director --setups cmsd --clients 1,4 --duration 5s
  sitebox-bench director --scale 1000         # about 1.5 minutes
  sitebox-bench director --scale 1000 --tree  # about 2.5 minutes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.Setups = strings.Split(setups, ",")
			run, err := startBenchRun(cmd, "director", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			if scale.Servers > 0 {
				scale.NoHoldings = !holdings
				return runDirectorScale(cmd, run, scale)
			}
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
	fl.IntVar(&cfg.Files, "files", 100, "number of files on the data server, opened round-robin (with --scale: files of each kind located, default 20)")
	fl.StringVar(&setups, "setups", "sitebox,cmsd", "redirectors to measure, comma-separated")
	fl.StringVar(&workDir, "work-dir", "", "scratch directory (default: a temporary one, removed)")
	fl.IntVar(&scale.Servers, "scale", 0, "measure the director with this many simulated data servers instead")
	fl.IntVar(&scale.Sites, "sites", 50, "with --scale: sites the simulated servers are spread over")
	fl.DurationVar(&scale.Interval, "interval", 10*time.Second, "with --scale: the servers' advertisement interval")
	fl.BoolVar(&scale.Cmsd, "cmsd", true, "with --scale: also measure a cmsd manager with one data server")
	fl.IntVar(&scale.Rounds, "rounds", 3, "with --scale: redirect-rate rounds, each the director then cmsd")
	fl.BoolVar(&scale.Tree, "tree", false, "with --scale: site and regional directors below the top one")
	fl.IntVar(&scale.Regions, "regions", 0, "with --scale --tree: regional directors (default 5, or enough for at most 1000 servers each)")
	fl.BoolVar(&holdings, "holdings", true, "with --scale: the servers send holdings filters, as boxes do (false: every first open asks every server)")
	return cmd
}

// runDirectorScale is `sitebox-bench director --scale N`; --clients
// (its largest value) and --duration apply to the redirect rate, --files
// (when given) to the files of each kind located.
func runDirectorScale(cmd *cobra.Command, run *benchRun, scale bench.DirectorScaleConfig) error {
	fl := cmd.Flags()
	if fl.Changed("clients") {
		if clients, _ := fl.GetIntSlice("clients"); len(clients) > 0 {
			scale.Clients = slices.Max(clients)
		}
	}
	if fl.Changed("files") {
		scale.Files, _ = fl.GetInt("files")
	}
	scale.Duration, _ = fl.GetDuration("duration")
	scale.Sitebox, scale.WorkDir, scale.Out = run.sitebox, run.workDir, cmd.ErrOrStderr()
	rep, err := bench.DirectorScale(run.ctx, scale)
	if rep != nil && rep.Joined > 0 {
		fmt.Fprint(cmd.OutOrStdout(), bench.FormatDirectorScale(rep))
	}
	return err
}
