// Command sitebox is a Tier-3 "site in a box": origin, cache, director and
// job router behind one binary and one config file.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"sitebox/internal/version"
)

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "sitebox",
		Short:         "A Tier-3 site in a box: data federation over root:// and https://",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.String(),
	}
	// "sitebox --version" and "sitebox version" print the same line.
	root.SetVersionTemplate("sitebox {{.Version}}\n")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version of this build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "sitebox %s\n", version.String())
			return err
		},
	})
	addServeCommand(root)
	addConfigCommands(root)
	addTransferCommands(root)
	addMountCommand(root)
	addBenchCommands(root)
	addCacheCommands(root)
	addFederationCommand(root)
	addTokenCommands(root)
	addJobCommands(root)
	addDoctorCommand(root)
	addFleetCommands(root)
	return root
}
