package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"sitebox/internal/admin"
	"sitebox/internal/config"
)

// adminFlags find the admin socket of a running box the way serve finds
// its state dir: --state-dir, else [server] state_dir from --config, else
// serve's default.
type adminFlags struct {
	configFile string
	stateDir   string
}

func (f *adminFlags) add(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVarP(&f.configFile, "config", "c", "", "config file of the running box (for [server] state_dir)")
	fl.StringVar(&f.stateDir, "state-dir", "", "state dir of the running box (overrides --config)")
}

// resolveStateDir returns the state dir that serve would use with the
// same --config and --state-dir.
func (f *adminFlags) resolveStateDir(cmd *cobra.Command) (string, error) {
	cfg, err := f.resolveConfig(cmd)
	if err != nil {
		return "", err
	}
	return cfg.Server.StateDir, nil
}

// resolveConfig is the running box's config as serve reads it, defaults
// applied, with --state-dir applied over the file.
func (f *adminFlags) resolveConfig(cmd *cobra.Command) (*config.Config, error) {
	cfg := &config.Config{}
	if f.configFile != "" {
		c, _, err := config.Load(f.configFile)
		var ps *config.Problems
		switch {
		case err == nil:
			cfg = c
		case c != nil && errors.As(err, &ps):
			// The file decoded; its other problems (a pool gone missing, say)
			// do not change where the running box keeps its socket.
			cfg = c
		default:
			return nil, err
		}
	}
	if cmd.Flags().Changed("state-dir") {
		cfg.Server.StateDir = f.stateDir
	}
	host, _ := os.Hostname()
	cfg.ApplyDefaults(host, os.Geteuid() == 0)
	return cfg, nil
}

func (f *adminFlags) client(cmd *cobra.Command) (*admin.Client, error) {
	dir, err := f.resolveStateDir(cmd)
	if err != nil {
		return nil, err
	}
	return admin.NewClient(dir), nil
}

// addCacheCommands registers `sitebox cache ls|stats|evict`.
func addCacheCommands(root *cobra.Command) {
	f := &adminFlags{}
	cacheCmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect and evict the cache of a running box (through its admin socket)",
		Example: `  sitebox cache stats --config /etc/sitebox/site.toml
  sitebox cache ls /store/user --state-dir /var/lib/sitebox
  sitebox cache evict /store/user/old`,
	}
	f.add(cacheCmd)
	var asJSON bool
	jsonFlag := func(c *cobra.Command) *cobra.Command {
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of text")
		return c
	}

	cacheCmd.AddCommand(jsonFlag(newCacheLsCmd(f, &asJSON)))
	cacheCmd.AddCommand(jsonFlag(&cobra.Command{
		Use:   "stats",
		Short: "Show hit ratio, traffic, disk and RAM use of the cache",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClient(cmd, f, func(ctx context.Context, c *admin.Client) error {
				s, err := c.Stats(ctx)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), s)
				}
				printStats(cmd.OutOrStdout(), s)
				return nil
			})
		},
	}))
	cacheCmd.AddCommand(jsonFlag(&cobra.Command{
		Use:   "evict PATH",
		Short: "Remove the cached copy of a file, or of everything below a directory",
		Long: `Remove the cached copy of a file, or of everything below a directory.
Files open by clients are kept (and named in the error); the rest go.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withClient(cmd, f, func(ctx context.Context, c *admin.Client) error {
				r, err := c.Evict(ctx, args[0])
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), r)
				}
				printEvicted(cmd.OutOrStdout(), r)
				return nil
			})
		},
	}))
	root.AddCommand(cacheCmd)
}

// withClient runs fn with a client for the box and a context that Ctrl-C
// cancels.
func withClient(cmd *cobra.Command, f *adminFlags, fn func(context.Context, *admin.Client) error) error {
	c, err := f.client(cmd)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return fn(ctx, c)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("printing JSON: %w", err)
	}
	return nil
}
