package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/auth"
	"sitebox/internal/box"
)

// addTokenCommands registers `sitebox token keygen|issue`: a site issuer
// out of the box, so a Tier-3 needs no external identity provider.
func addTokenCommands(root *cobra.Command) {
	var af adminFlags
	tok := &cobra.Command{
		Use:   "token",
		Short: "The box's own token issuer: make its key, issue WLCG tokens",
		Long: `A box with [auth] site_issuer = true serves its JWKS and OpenID
configuration over https:// and trusts the tokens it issues; other boxes
trust it with [[auth.issuer]] url = "<this box's issuer URL>".`,
	}
	af.add(tok)

	var force bool
	keygen := &cobra.Command{
		Use:   "keygen",
		Short: "Make the site issuer's ES256 key in <state_dir>/issuer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			dir := filepath.Join(cfg.Server.StateDir, box.IssuerDir)
			gen := auth.GenerateKey
			if force {
				gen = auth.GenerateKeyForce
			}
			path, err := gen(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key: %s\nissuer: %s\n", path, box.SiteIssuerURL(cfg))
			return nil
		},
	}
	keygen.Flags().BoolVar(&force, "force", false, "replace an existing key (every token issued with it stops working)")

	var req auth.TokenRequest
	var groups, scopes, aud string
	issue := &cobra.Command{
		Use:   "issue",
		Short: "Print a signed WLCG token",
		Example: `  sitebox token issue --sub alice --groups /cms --scope storage.read:/store --lifetime 1h
  BEARER_TOKEN=$(sitebox token issue --sub alice --scope "storage.read:/store storage.create:/store/user/alice") xrdcp ...`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := af.resolveConfig(cmd)
			if err != nil {
				return err
			}
			is, err := auth.LoadIssuer(filepath.Join(cfg.Server.StateDir, box.IssuerDir, auth.KeyFileName), box.SiteIssuerURL(cfg))
			if err != nil {
				return fmt.Errorf("%w (run `sitebox token keygen` first)", err)
			}
			req.Groups = splitList(groups)
			req.Scopes = splitList(scopes)
			req.Audience = splitList(aud)
			t, err := is.Issue(req)
			if err != nil {
				return err
			}
			warnUnassertedGroups(cmd, req.Groups, cfg.Auth.SiteIssuerVOs)
			if most := cfg.Auth.MaxLifetime(); req.Lifetime > most {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: this box refuses the token: --lifetime %v is over [auth] max_token_lifetime (%v)\n", req.Lifetime, most)
			}
			fmt.Fprintln(cmd.OutOrStdout(), t)
			return nil
		},
	}
	fl := issue.Flags()
	fl.StringVar(&req.Subject, "sub", "", "subject (the user)")
	fl.StringVar(&groups, "groups", "", "groups, comma- or space-separated (/cms, /cms/production): the first gives the VO; a box counts them only for VOs in [auth] site_issuer_vos")
	fl.StringVar(&scopes, "scope", "", "WLCG scopes, comma- or space-separated (storage.read:/store)")
	fl.StringVar(&aud, "aud", "", "audiences (default: the WLCG \"any\" audience)")
	fl.DurationVar(&req.Lifetime, "lifetime", time.Hour, "how long the token is valid")
	tok.AddCommand(keygen, issue)
	root.AddCommand(tok)
}

// warnUnassertedGroups tells on stderr which groups this box will ignore:
// it trusts its own issuer only for [auth] site_issuer_vos. The token is
// still printed, since other boxes trusting this issuer decide with their
// own [[auth.issuer]] vos.
func warnUnassertedGroups(cmd *cobra.Command, groups, vos []string) {
	for _, g := range groups {
		vo, _, _ := strings.Cut(strings.TrimPrefix(g, "/"), "/")
		if !slices.Contains(vos, vo) {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: this box ignores group %s (VO %q is not in [auth] site_issuer_vos)\n", g, vo)
		}
	}
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}
