package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"sitebox/internal/units"
	"sitebox/test/bench"
)

// newBenchOriginCmd is `sitebox-bench origin`: xrdcp copies and vector
// reads of files from sitebox and from a real xrootd.
func newBenchOriginCmd() *cobra.Command {
	var (
		size    string
		clients []int
		rounds  int
		workDir string
		modes   []string
		python  string
		readvs  int
	)
	origin := &cobra.Command{
		Use:   "origin",
		Short: "xrdcp copies and vector reads from sitebox and from a real xrootd, side by side",
		Long: "Modes (--modes): plain — N parallel one-stream xrdcp copies of one file, by xrdcp's default read\n" +
			"path (pgread) and by plain kXR_read; streams — the same with xrdcp -S 4; readv — 4 threads of the\n" +
			"XRootD Python bindings issuing vector reads of 16 × 32 KiB at random offsets of 8 files of 64 MiB,\n" +
			"reported as readv/s and the server's CPU time per readv.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := units.ParseSize(size)
			if err != nil {
				return fmt.Errorf("--size: %w", err)
			}
			if modes, err = bench.ParseOriginModes(modes); err != nil {
				return fmt.Errorf("--modes: %w", err)
			}
			run, err := startBenchRun(cmd, "origin", workDir)
			if err != nil {
				return err
			}
			defer run.done()
			rep, err := bench.Origin(run.ctx, bench.OriginConfig{
				Sitebox: run.sitebox, WorkDir: run.workDir, FileSize: n,
				Clients: clients, Rounds: rounds, Modes: modes, Python: python,
				ReadvsPerThread: readvs, Out: cmd.ErrOrStderr(),
			})
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), bench.FormatOrigin(rep))
			return nil
		},
	}
	origin.Flags().StringVar(&size, "size", "1GiB", "size of the copy modes' test file")
	origin.Flags().IntSliceVar(&clients, "clients", []int{1, 4, 16}, "parallel client counts of the copy modes")
	origin.Flags().IntVar(&rounds, "rounds", 3, "rounds per point (median reported)")
	origin.Flags().StringVar(&workDir, "work-dir", "", "scratch directory (default: a temporary one)")
	origin.Flags().StringSliceVar(&modes, "modes", bench.OriginModes, "workloads to run: "+strings.Join(bench.OriginModes, ", "))
	origin.Flags().StringVar(&python, "python", "", "Python with the XRootD bindings for the readv mode (default $SITEBOX_PYTHON, else python3)")
	origin.Flags().IntVar(&readvs, "readvs", 1000, "vector reads per thread and pass in the readv mode")
	return origin
}
