package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/box"
	"sitebox/internal/director"
)

// addMembershipCommands registers `sitebox federation join|approve|
// members|revoke`: joining is two steps, the box's operator runs join and
// sends the line it prints, the director's operator runs approve with it.
func addMembershipCommands(fed *cobra.Command) {
	fed.AddCommand(joinCommand(), approveCommand(), membersCommand(), revokeCommand(), removeCommand(), installCertCommand(), reissueCACommand())
}

func joinCommand() *cobra.Command {
	var af adminFlags
	var prefixes []string
	cmd := &cobra.Command{
		Use:   "join https://DIRECTOR:PORT",
		Short: "Print this box's request to join a director's federation (its operator approves it)",
		Long: `Print the request to join the federation of the director at the URL: this
box's name, site, roles, prefixes and endpoints from its config, and its
federation key (made on first use in the state dir, mode 0600). Send the
printed line to the director's operator, who approves it with
"sitebox federation approve"; the box's advertisements are accepted from then
on (add the director to [advertise] to).`,
		Example: `  sitebox federation join https://region.example.org:8443 -c /etc/sitebox/sitebox.toml
  sitebox federation join https://region.example.org:8443 --prefix /store/t3   # a director`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if msg := checkDirectorURL(args[0]); msg != "" {
				return fmt.Errorf("%s", msg)
			}
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			r, text, err := box.JoinRequest(cfg, args[0], prefixes)
			if err != nil {
				return fmt.Errorf("join: %w", err)
			}
			e := cmd.ErrOrStderr()
			fmt.Fprintf(e, "Request to join %s as %q (site %s): roles %s, prefixes %s, root %s, https %s\nkey %s (%s)\n",
				args[0], r.Name, orDash(r.Site), strings.Join(r.Roles, ","), strings.Join(r.Prefixes, ","), orDash(r.Root), orDash(r.HTTPS),
				r.Key, director.KeyFile(cfg.Server.StateDir))
			notes, _ := director.CheckJoinHosts(r.Member)
			for _, n := range notes {
				fmt.Fprintf(e, "note: %s\n", n)
			}
			if !slices.Contains(cfg.Advertise.To, args[0]) {
				fmt.Fprintf(e, "note: %s is not in [advertise] to yet; add it so the box advertises there\n", args[0])
			}
			fmt.Fprintf(e, "Ask the director's operator to run, on the director host:\n\n")
			fmt.Fprintf(cmd.OutOrStdout(), "sitebox federation approve %s\n", text)
			return nil
		},
	}
	af.add(cmd)
	cmd.Flags().StringArrayVar(&prefixes, "prefix", nil, "prefix to ask for (repeatable; default: the box's exports and cache routes)")
	return cmd
}

func checkDirectorURL(u string) string {
	if !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://") {
		return fmt.Sprintf("%q is not a director URL like https://host:8443", u)
	}
	return ""
}

func membersCommand() *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the boxes approved to advertise to this director",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			ms, err := director.ReadMembers(director.MembersFile(cfg.Server.StateDir))
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSITE\tROLES\tPREFIXES\tROOT\tHTTPS\tAPPROVED")
			row := func(name, site string, roles, prefixes []string, root, https, approved string) {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, orDash(site), strings.Join(roles, ","), strings.Join(prefixes, ","), orDash(root), orDash(https), approved)
			}
			for _, s := range cfg.Director.Members {
				row(s.Name, s.Site, s.Roles, s.Prefixes, s.Root, s.HTTPS, "config")
			}
			for _, m := range ms {
				row(m.Name, m.Site, m.Roles, m.Prefixes, m.Root, m.HTTPS, m.Approved.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	af.add(cmd)
	return cmd
}

func revokeCommand() *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Remove a member: the running director drops its servers and refuses its ads",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			name := args[0]
			for _, s := range cfg.Director.Members {
				if s.Name == name {
					return fmt.Errorf("%q is a member in the config ([[director.member]]): remove it there and restart", name)
				}
			}
			err = director.UpdateMembers(director.MembersFile(cfg.Server.StateDir), func(ms []director.Member) ([]director.Member, error) {
				for i, m := range ms {
					if m.Name == name {
						return slices.Delete(ms, i, i+1), nil
					}
				}
				return nil, fmt.Errorf("%q is not a member (see `sitebox federation members`)", name)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s: the running director drops its servers within a second or two\n", name)
			return nil
		},
	}
	af.add(cmd)
	return cmd
}

func removeCommand() *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Forget a server that went down for good (down servers stay listed until removed)",
		Long: `A server that stops advertising, or that a probe finds dead, stays in the
director's registry as DOWN (in ` + "`sitebox federation`" + `, the dashboard and the
servers{state="down"} metric), so a failure never looks like absence. Once
the box is gone for good, remove it here (run on the director's host). It
comes back by itself if it advertises again; to refuse it, use revoke.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := af.client(cmd)
			if err != nil {
				return err
			}
			if err := c.RemoveServer(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %s from the director's registry\n", args[0])
			return nil
		},
	}
	af.add(cmd)
	return cmd
}
