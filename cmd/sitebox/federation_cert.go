package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/box"
	"sitebox/internal/director"
)

// issueCert has the federation CA sign the approved box's certificate and
// tells the operator how to hand it over.
func issueCert(cmd *cobra.Command, stateDir, name string, r director.Request, m director.Member) error {
	pub, err := r.TLSPublicKey()
	if err != nil {
		return fmt.Errorf("approved, but no certificate: %w", err)
	}
	ca, err := director.LoadOrCreateCA(stateDir, name)
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

func installCertCommand() *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "install-cert FILE",
		Short: "Install the certificate a federation director issued this box at approval",
		Long: `Check the certificate file "sitebox federation approve" wrote on a director with
[director] ca = true (the box's certificate, then the federation CA's) against
this box's TLS key and install both in the state dir. From its next start the
box serves that certificate on https:// and roots:// (unless [https] cert is
set) and trusts the federation CA when it advertises. FILE "-" is stdin.`,
		Example: `  sitebox federation install-cert t3-origin.pem -c /etc/sitebox/sitebox.toml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			var data []byte
			if args[0] == "-" {
				data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
			} else {
				data, err = os.ReadFile(args[0])
			}
			if err != nil {
				return err
			}
			leaf, err := box.InstallCert(cfg, data)
			if err != nil {
				return fmt.Errorf("install-cert: %w", err)
			}
			hosts := append([]string{}, leaf.DNSNames...)
			for _, ip := range leaf.IPAddresses {
				hosts = append(hosts, ip.String())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed the certificate for %s (until %s) and the federation CA %s\n",
				strings.Join(hosts, ", "), leaf.NotAfter.Format(time.DateOnly), box.FederationCAFile(cfg.Server.StateDir))
			if cfg.HTTPS.Cert != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: [https] cert is set: the box serves that one; remove cert and key to serve this one\n")
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Restart the box to serve it (systemctl restart sitebox).\n")
			return nil
		},
	}
	af.add(cmd)
	return cmd
}
