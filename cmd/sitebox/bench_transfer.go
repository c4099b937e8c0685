package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/outbound"
	"sitebox/internal/sitebench"
	"sitebox/internal/transfer"
)

// newBenchTransferCmd is `sitebox bench transfer`: parallel clients
// copying random files from federation URLs, MB/s over time.
func newBenchTransferCmd() *cobra.Command {
	var (
		cfg    sitebench.TransferConfig
		rf     remoteFlags
		outDir string
	)
	cmd := &cobra.Command{
		Use:   "transfer URL...",
		Short: "N parallel clients copying random files from root://, roots:// or https:// URLs to /dev/null: MB/s as a table and a chart",
		Long: `Each URL is a file or a directory; the files of a directory (not its
subdirectories; empty files skipped) join one list. For each client count
(--clients), that many clients copy files picked at random from the list
to /dev/null for --duration, with sitebox's own client (the reads of
` + "`sitebox get`" + `: 8 MiB ranges, 4 in flight), each with its own connections.
Aggregate MB/s is sampled every second.

Prints, as Markdown: MB/s mean, p10 and p90 of the per-second samples,
files copied and errors per client count; writes transfer.png (MB/s over
time, a line per client count) into --out. The bearer token comes from
$BEARER_TOKEN or $BEARER_TOKEN_FILE, as for sitebox get. Progress goes
to stderr.`,
		Example: `  sitebox bench transfer root://se.example.org//store/test/
  sitebox bench transfer --clients 1,16 --duration 60s https://box:8443/store/f1 https://box:8443/store/f2
  sitebox bench transfer --ca box-cert.pem roots://box:1094//store/test/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cfg.Duration <= 0 {
				return fmt.Errorf("--duration %v: want a positive duration", cfg.Duration)
			}
			tok, err := bearerToken()
			if err != nil {
				return err
			}
			cfg.URLs, cfg.Out = args, cmd.ErrOrStderr()
			cfg.Options = transfer.Options{CAFile: rf.caFile, Insecure: rf.insecure, Options: outbound.Options{Token: tok}}
			ctx, stop := signalContext()
			defer stop()
			rep, err := sitebench.Transfer(ctx, cfg)
			if rep != nil && len(rep.Points) > 0 {
				err = printTableAndChart(cmd.OutOrStdout(), sitebench.FormatTransfer(rep), func() (string, error) { return sitebench.TransferChart(rep, outDir) }, err)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntSliceVar(&cfg.Clients, "clients", []int{1, 4, 8}, "parallel client counts")
	fl.DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long each client count runs")
	fl.StringVar(&outDir, "out", ".", "directory for the PNG chart")
	rf.add(cmd)
	return cmd
}
