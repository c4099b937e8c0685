package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/director"
	"sitebox/internal/tlsutil"
)

func addFederationCommand(root *cobra.Command) {
	var df directorFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "federation https://DIRECTOR:PORT",
		Short: "Show a director's federation: its servers by site, with health",
		Example: `  sitebox federation https://region.example.org:8443 --ca /etc/sitebox/region-ca.pem
  sitebox federation https://127.0.0.1:8443 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, raw, err := df.federation(cmd, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				_, err := cmd.OutOrStdout().Write(raw)
				return err
			}
			printFederation(cmd.OutOrStdout(), f)
			return nil
		},
	}
	df.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the director's JSON")
	addMembershipCommands(cmd)
	root.AddCommand(cmd)
}

// directorFlags are the --ca and --insecure of a command that asks a
// director.
type directorFlags struct {
	caFile   string
	insecure bool
}

func (f *directorFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.caFile, "ca", os.Getenv("SITEBOX_CA"), "extra CA certificate (PEM) to trust (env SITEBOX_CA)")
	cmd.Flags().BoolVar(&f.insecure, "insecure", os.Getenv("SITEBOX_INSECURE") == "1", "do not verify the certificate")
}

// federation fetches the federation view of the director at base, giving
// it 10 s.
func (f *directorFlags) federation(cmd *cobra.Command, base string) (*director.Federation, []byte, error) {
	hc, err := directorClient(f.caFile, f.insecure)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
	defer cancel()
	return fetchFederation(ctx, hc, base)
}

// directorClient is an HTTPS client for a director's API, trusting
// caFile besides the system roots.
func directorClient(caFile string, insecure bool) (*http.Client, error) {
	return tlsutil.HTTPClient(caFile, insecure, 0)
}

func fetchFederation(ctx context.Context, c *http.Client, base string) (*director.Federation, []byte, error) {
	u := strings.TrimSuffix(base, "/") + director.APIPrefix + "federation"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%q is not a director URL like https://host:8443: %w", base, err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("asking %s: %w", base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil, fmt.Errorf("%s is not a director (no %s)", base, director.APIPrefix+"federation")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("%s: %s", base, resp.Status)
	}
	var f director.Federation
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, nil, fmt.Errorf("%s answered something that is not a federation view: %w", base, err)
	}
	return &f, raw, nil
}

// printFederation draws the tree: the director, then each site with its
// servers (those learned through a child director under it).
func printFederation(w io.Writer, f *director.Federation) {
	fmt.Fprintf(w, "director %s (site %s)", f.Name, orDash(f.Site))
	if len(f.Parents) > 0 {
		fmt.Fprintf(w, " → parents %s", strings.Join(f.Parents, ", "))
	}
	if len(f.VOs) > 0 {
		sort.Strings(f.VOs)
		fmt.Fprintf(w, "; VO fallbacks: %s", strings.Join(f.VOs, ", "))
	}
	fmt.Fprintln(w)
	bySite := map[string][]director.Server{}
	for _, s := range f.Servers {
		bySite[s.Site] = append(bySite[s.Site], s)
	}
	sites := make([]string, 0, len(bySite))
	for s := range bySite {
		sites = append(sites, s)
	}
	sort.Strings(sites)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for i, site := range sites {
		branch, indent := "├─", "│  "
		if i == len(sites)-1 {
			branch, indent = "└─", "   "
		}
		fmt.Fprintf(tw, "%s site %s\t\t\t\t\t\n", branch, orDash(site))
		for _, s := range bySite[site] {
			name := s.Name
			if s.Via != "" {
				name += " (via " + s.Via + ")"
			}
			fmt.Fprintf(tw, "%s  %s\t%s\t%s\t%s\t%s\t%s\n", indent, name, s.Role, orDash(s.Root), strings.Join(s.Prefixes, ","), health(s, f.Now), space(s))
		}
	}
	tw.Flush()
	if len(f.Servers) == 0 {
		fmt.Fprintln(w, "└─ no servers have advertised yet")
	}
}

func health(s director.Server, now time.Time) string {
	switch {
	case s.Downtime.Active(now):
		return fmt.Sprintf("DOWNTIME until %s (%s)", s.Downtime.End.Local().Format("01-02 15:04"), s.Downtime.Reason)
	case s.Down:
		return "DOWN (probe failed" + downSince(s) + ")"
	case !s.Static && (now.After(s.Expires) || !s.DownSince.IsZero()):
		return "DOWN (stopped advertising" + downSince(s) + ")"
	case s.Static:
		return "ok (static)"
	case s.Health != "" && s.Health != "ok":
		return fmt.Sprintf("%s (seen %s ago)", s.Health, now.Sub(s.LastSeen).Round(100*time.Millisecond))
	}
	return fmt.Sprintf("ok (seen %s ago)", now.Sub(s.LastSeen).Round(100*time.Millisecond))
}

// downSince says since when s is down, in the reader's time zone.
func downSince(s director.Server) string {
	if s.DownSince.IsZero() {
		return ""
	}
	return "; since " + s.DownSince.Local().Format("01-02 15:04:05")
}

func space(s director.Server) string {
	if s.Total == 0 {
		return ""
	}
	return fmt.Sprintf("%.0f%% free, load %.2f", 100*float64(s.Free)/float64(s.Total), s.Load)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
