package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/box"
	"sitebox/internal/director"
)

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

func reissueCACommand() *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "reissue-ca",
		Short: "Re-issue the federation CA certificate with [director] ca_domains and ca_networks (same key)",
		Long: `Replace the federation CA certificate of this director (run on its host) with
one of the same key, subject and expiry that carries the name constraints of
[director] ca_domains and ca_networks (none when both are empty). A CA made
before they were set does not carry them, and approve and the director refuse
to sign under constraints the certificate does not hold until this is run.
It refuses, naming them, when a certificate the CA issued names a host
outside the new constraints. Members keep their certificates. Afterwards,
restart the director (it re-issues its own certificate at start) and have
users download ca.pem again: only that copy holds the constraints. The old
CA certificate has the same key, so whoever keeps it still trusts anything
the key signs; to bind everyone, start a new CA instead (move
state_dir/federation/ca.pem and ca-key.pem away and approve every member
again).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			if !cfg.Director.CA {
				return errors.New("reissue-ca: this director is no CA ([director] ca = true)")
			}
			nc, err := cfg.Director.NameConstraints()
			if err != nil {
				return fmt.Errorf("reissue-ca: [director] %w", err)
			}
			if _, err := director.ReissueCA(cfg.Server.StateDir, nc); err != nil {
				return fmt.Errorf("reissue-ca: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "re-issued the federation CA %s with name constraints: %s\n", director.CAFile(cfg.Server.StateDir), nc)
			fmt.Fprintf(cmd.ErrOrStderr(), "Restart the director, and have users download %s again.\n", director.CAPath)
			return nil
		},
	}
	af.add(cmd)
	return cmd
}
