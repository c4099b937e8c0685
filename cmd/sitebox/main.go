// Command sitebox is a Tier-3 "site in a box": origin, cache, director and
// job router behind one binary and one config file.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"sitebox/internal/remote"

	"sitebox/internal/version"
)

func main() {
	root := newRootCmd()
	// mount(8) runs mount.fuse.sitebox (a link to this program) for type
	// fuse.sitebox; without it, mount.fuse3 runs "sitebox SOURCE DIR -o
	// OPTIONS", the program named by the type, found in PATH.
	if filepath.Base(os.Args[0]) == mountHelperName || len(os.Args) > 1 && remote.IsURL(os.Args[1]) {
		os.Exit(runMountHelper(root))
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox:", err)
		os.Exit(1)
	}
}

// runMountHelper is sitebox run as mount.fuse.sitebox by mount(8) (or
// as sitebox by mount.fuse3); its
// exit status is mount(8)'s: 1 for a wrong invocation, 32 for a mount
// that failed.
func runMountHelper(root *cobra.Command) int {
	args, fake, err := mountHelperArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, mountHelperName+":", err)
		return 1
	}
	if fake {
		return 0
	}
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, mountHelperName+":", err)
		return 32
	}
	return 0
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
