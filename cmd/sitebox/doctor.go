package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/config"
	"sitebox/internal/doctor"
)

// addDoctorCommand registers `sitebox doctor`.
func addDoctorCommand(root *cobra.Command) {
	root.AddCommand(newDoctorCmd(os.Exit))
}

// newDoctorCmd builds the command; exit ends the process with the
// report's code (0 ok, 1 warnings, 2 errors), so a test can catch it.
func newDoctorCmd(exit func(int)) *cobra.Command {
	var (
		configFile, speed string
		asJSON            bool
		timeout           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the box's setup from its config and explain each problem with its fix",
		Long: `Check the box's setup from its config: listeners and their reachability at
the advertised address, the advertised address against this machine's
interfaces, directors and token issuers (reachability, clock skew), the
certificate, free space and inodes, the cache disk's write speed against
the network's, and Slurm. Each problem is explained with its fix.
Exits 0 when all is well, 1 with warnings, 2 with errors.`,
		Example: `  sitebox doctor --config /etc/sitebox/site.toml
  sitebox doctor --config site.toml --network-speed 25Gbit --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			netSpeed, err := doctor.ParseNetworkSpeed(speed)
			if err != nil {
				return err
			}
			cfg, problems, err := loadForDoctor(configFile)
			if err != nil {
				return err
			}
			ctx, stop := signalContext()
			rep := doctor.Run(ctx, cfg, doctor.Options{
				ConfigName: configFile, ConfigProblems: problems,
				NetworkSpeed: netSpeed, Timeout: timeout,
			})
			stop()
			if asJSON {
				err = printJSON(cmd.OutOrStdout(), rep)
			} else {
				_, err = fmt.Fprint(cmd.OutOrStdout(), rep.Text())
			}
			if err != nil {
				return err
			}
			if code := rep.ExitCode(); code != 0 {
				exit(code)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&configFile, "config", "c", "", "config file of the box (TOML)")
	fl.BoolVar(&asJSON, "json", false, "print JSON instead of text")
	fl.StringVar(&speed, "network-speed", "10Gbit", `the box's network, which the cache disk must keep up with ("1Gbit", "25Gbit", "500MB/s")`)
	fl.DurationVar(&timeout, "timeout", 5*time.Second, "limit for each network probe and command")
	return cmd
}

// loadForDoctor reads the config as serve does, defaults applied, but
// keeps going when the file has problems: they are reported along with
// everything else, which is what a doctor is for.
func loadForDoctor(file string) (*config.Config, []config.Problem, error) {
	cfg := &config.Config{}
	var problems []config.Problem
	if file != "" {
		c, _, err := config.Load(file)
		var ps *config.Problems
		switch {
		case err == nil:
			cfg = c
		case c != nil && errors.As(err, &ps):
			cfg, problems = c, ps.List
		default:
			return nil, nil, err
		}
	}
	host, _ := os.Hostname()
	cfg.ApplyDefaults(host, os.Geteuid() == 0)
	if file == "" {
		problems = cfg.Validate()
	}
	return cfg, problems, nil
}
