package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/fleet"
)

// newBenchMatrixCmd is `sitebox bench matrix`: the site-to-site
// throughput matrix a director builds from the probes its boxes make to
// each other ([probe] interval on the boxes).
func newBenchMatrixCmd() *cobra.Command {
	var caFile, out string
	var insecure bool
	var days int
	cmd := &cobra.Command{
		Use:   "matrix https://DIRECTOR:PORT",
		Short: "Site-to-site throughput matrix (daily average, low, high) from the fleet's periodic probes",
		Long: `Every box with [probe] interval set reads its directors' fleet and, each
interval, reads [probe] size bytes from every other box's probe endpoint
over https://, one box at a time; it reports the results with its
advertisements. The director keeps two weeks of daily statistics per pair
of boxes; this command prints them as one table per day and draws the
newest day as a heat map (matrix.png in --out).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			hc, err := directorClient(caFile, insecure)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(args[0], "/")+fleet.APIPrefix+"matrix", nil)
			if err != nil {
				return err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s: %s (is it a director?)", args[0], resp.Status)
			}
			var cells []fleet.MatrixCell
			if err := json.NewDecoder(resp.Body).Decode(&cells); err != nil {
				return fmt.Errorf("matrix: %w", err)
			}
			fmt.Fprint(cmd.OutOrStdout(), fleet.FormatMatrix(cells, days))
			if len(cells) > 0 {
				path, err := fleet.MatrixChart(cells, out)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "chart: %s\n", path)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&caFile, "ca", os.Getenv("SITEBOX_CA"), "extra CA certificate (PEM) for the director (env SITEBOX_CA)")
	fl.BoolVar(&insecure, "insecure", os.Getenv("SITEBOX_INSECURE") == "1", "do not verify the director's certificate")
	fl.IntVar(&days, "days", 1, "days to print, newest first (0: all kept)")
	fl.StringVar(&out, "out", ".", "directory for matrix.png")
	return cmd
}
