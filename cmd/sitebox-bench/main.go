// Command sitebox-bench runs the comparison benchmarks: sitebox side by
// side with the programs it replaces (xrootd, XCache, cmsd, a Slurm
// submit host), each started here as a child process. It is test tooling
// kept out of the sitebox binary; the benchmarks an operator runs against
// their own machine (disk, transfer, matrix) are `sitebox bench`.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		var ce childExit
		if errors.As(err, &ce) {
			os.Exit(int(ce)) // it printed its own errors
		}
		fmt.Fprintln(os.Stderr, "sitebox-bench:", err)
		os.Exit(1)
	}
}

// childExit is the exit status of the benchmark re-run in its own network
// namespace (see linkNamespace), which has printed its report and errors
// itself.
type childExit int

func (c childExit) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sitebox-bench",
		Short:         "Comparison benchmarks: sitebox against xrootd, XCache, cmsd, Slurm and FUSE mounts",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().String("sitebox", "", "the sitebox binary to benchmark (default: sitebox next to this program, else on PATH)")
	root.AddCommand(newBenchOriginCmd(), newBenchCacheCmd(), newBenchDirectorCmd(), newBenchAuthCmd(), newBenchJobsCmd(), newBenchTPCCmd(), newBenchMountCmd())
	return root
}
