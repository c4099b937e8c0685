package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sitebox/internal/box"
	"sitebox/internal/config"
	"sitebox/internal/director"
)

// approveOptions are approve's flags.
type approveOptions struct {
	prefixes      []string
	replace       bool
	yes           bool
	allowLoopback bool
}

func approveCommand() *cobra.Command {
	var af adminFlags
	var o approveOptions
	cmd := &cobra.Command{
		Use:   "approve REQUEST",
		Short: "Approve a box's join request (run on the director host)",
		Long: `Record the box of a join request (printed by "sitebox federation join") as a
member of this director's federation, optionally narrowing its prefixes.
The running director picks it up within a second or two, without a restart.
A director with [director] ca = true also issues the box's TLS certificate,
signed by the federation CA, for the host names of its endpoints, and writes
it to a file for the box's "sitebox federation install-cert".

The request must be addressed to this director, and its endpoints must name
hosts clients elsewhere can reach: wildcards, unspecified, loopback,
link-local and multicast addresses, names that are no host name or not fully
qualified, this director's own names and names another member holds are
refused, each with the reason, as are names outside [director] ca_domains
and ca_networks. approve shows what it would approve and asks on the
terminal; --yes approves without asking (scripts), and without a terminal
approve needs it.`,
		Example: `  sitebox federation approve sbxjoin1.eyJ… -c /etc/sitebox/sitebox.toml
  sitebox federation approve sbxjoin1.eyJ… --prefix /store/t3
  sitebox federation approve sbxjoin1.eyJ… --yes --allow-loopback   # a test federation on one machine`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			return approve(cmd, cfg, args[0], o)
		},
	}
	af.add(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&o.prefixes, "prefix", nil, "grant only this prefix (repeatable; each at or below a requested one)")
	fl.BoolVar(&o.replace, "replace", false, "give the name to the request's key even if a member of that name has another")
	fl.BoolVarP(&o.yes, "yes", "y", false, "approve without asking (what would be approved is still printed)")
	fl.BoolVar(&o.allowLoopback, "allow-loopback", false, "approve loopback names and addresses: a test federation whose boxes all run on this machine")
	return cmd
}

// approve checks the request, shows it, asks, records the member and,
// on a CA director, issues its certificate. Nothing is written before
// the operator said yes.
func approve(cmd *cobra.Command, cfg *config.Config, text string, o approveOptions) error {
	r, err := director.DecodeRequest(text)
	if err != nil {
		return err
	}
	m, err := r.Approve(o.prefixes, time.Now())
	if err != nil {
		return err
	}
	if !cfg.Director.Enabled {
		fmt.Fprintln(cmd.ErrOrStderr(), "note: this config has no [director] enabled = true; the member is recorded for when it has")
	}
	for _, s := range cfg.Director.Members {
		if s.Name == m.Name {
			return fmt.Errorf("%q is a member in the config ([[director.member]]); change it there", m.Name)
		}
	}
	if err := box.CheckAddressedHere(cfg, r.Director); err != nil {
		return fmt.Errorf("approve: %w", err)
	}
	policy, err := box.ApprovalPolicy(cfg, o.allowLoopback)
	if err != nil {
		return err
	}
	path := director.MembersFile(cfg.Server.StateDir)
	current, err := director.ReadMembers(path)
	if err != nil {
		return err
	}
	static := cfg.Director.StaticMembers()
	if err := policy.Check(m, append(static, current...)); err != nil {
		return fmt.Errorf("approve: %w", err)
	}
	var ca *director.CA
	if cfg.Director.CA {
		// Before asking: a CA whose constraints are not the configured
		// ones is the operator's to fix first.
		if ca, err = director.LoadOrCreateCA(cfg.Server.StateDir, cfg.Server.Name, policy.Constraints); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
	}
	showApproval(cmd, r, m, policy)
	if err := confirm(cmd, o.yes, m.Name); err != nil {
		return err
	}
	err = director.UpdateMembers(path, func(ms []director.Member) ([]director.Member, error) {
		// Again under the file's lock: another approve may have given a
		// name away meanwhile.
		if err := policy.Check(m, append(static, ms...)); err != nil {
			return nil, err
		}
		return recordMember(ms, m, o.replace)
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "approved %s (site %s): roles %s, prefixes %s, root %s, https %s\n",
		m.Name, orDash(m.Site), strings.Join(m.Roles, ","), strings.Join(m.Prefixes, ","), orDash(m.Root), orDash(m.HTTPS))
	if ca != nil {
		return issueCert(cmd, cfg.Server.StateDir, ca, r, m)
	}
	return nil
}

// recordMember puts m into the members ms, replacing the record of its
// name (with another key only when replace is set).
func recordMember(ms []director.Member, m director.Member, replace bool) ([]director.Member, error) {
	for i, old := range ms {
		if old.Name == m.Name+"-cache" || m.Name == old.Name+"-cache" {
			// A box's cache advertises as NAME-cache: the names would clash.
			return nil, fmt.Errorf("%q clashes with member %q (a box's cache advertises as NAME-cache)", m.Name, old.Name)
		}
		if old.Name != m.Name {
			continue
		}
		if old.Key != m.Key && !replace {
			return nil, fmt.Errorf("%q is already a member with another key (%s): a different box, or a new key? Approve with --replace to give the name to this key", m.Name, old.Key)
		}
		ms[i] = m
		return ms, nil
	}
	return append(ms, m), nil
}

// showApproval prints what approving would grant: the operator's last
// look before saying yes.
func showApproval(cmd *cobra.Command, r director.Request, m director.Member, p director.ApprovalPolicy) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Request of %q (site %s) to join %s:\n", m.Name, orDash(m.Site), r.Director)
	fmt.Fprintf(w, "  roles %s, prefixes %s\n  root %s, https %s\n  key %s\n",
		strings.Join(m.Roles, ","), strings.Join(m.Prefixes, ","), orDash(m.Root), orDash(m.HTTPS), m.Key)
	if p.CA {
		fmt.Fprintf(w, "  certificate from the federation CA for: %s\n", strings.Join(m.Hosts(), ", "))
		if p.Constraints.IsZero() {
			fmt.Fprintln(cmd.ErrOrStderr(), "note: [director] ca_domains is not set: nothing but this check limits the names the CA signs; set it to the federation's domains")
		}
	}
}

// confirm asks the operator on the terminal, unless yes. Without a
// terminal it fails at once rather than wait for input that never comes.
func confirm(cmd *cobra.Command, yes bool, name string) error {
	if yes {
		return nil
	}
	f, ok := cmd.InOrStdin().(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return errors.New("approve asks for confirmation on a terminal, and stdin is none: check the request above and add --yes to approve it without asking")
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "Approve %s? [y/N] ", name)
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("not approved: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("%s not approved", name)
}

// issueCert has the federation CA sign the approved box's certificate and
// tells the operator how to hand it over.
func issueCert(cmd *cobra.Command, stateDir string, ca *director.CA, r director.Request, m director.Member) error {
	pub, err := r.TLSPublicKey()
	if err != nil {
		return fmt.Errorf("approved, but no certificate: %w", err)
	}
	hosts := m.Hosts()
	chain, err := ca.Issue(pub, m.Name, hosts)
	if err != nil {
		return fmt.Errorf("approved, but no certificate: %w", err)
	}
	path, err := director.WriteIssued(stateDir, m.Name, chain)
	if err != nil {
		return fmt.Errorf("approved, but no certificate: %w", err)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "certificate for %s (%s) signed by the federation CA: %s\n", m.Name, strings.Join(hosts, ", "), path)
	fmt.Fprintf(cmd.ErrOrStderr(), "Copy it to the box and run there:\n\n  sitebox federation install-cert %s\n", path)
	return nil
}
