package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/director"
)

// addFleetCommands registers `sitebox fleet` (the regional operator's
// view of every box) and `sitebox downtime` (planned work, downtime.go).
func addFleetCommands(root *cobra.Command) {
	var df directorFlags
	fleetCmd := &cobra.Command{
		Use:   "fleet https://DIRECTOR:PORT",
		Short: "Every box advertising to a director: roles, version, health, last seen, config digest, downtime",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, _, err := df.federation(cmd, args[0])
			if err != nil {
				return err
			}
			printFleet(cmd.OutOrStdout(), f)
			return nil
		},
	}
	df.add(fleetCmd)

	root.AddCommand(fleetCmd, newDowntimeCmd())
}

// parseWhen reads "now", a duration after base, or a local time.
func parseWhen(s string, base, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("missing")
	}
	if s == "now" {
		return now, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return base.Add(d), nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02 15:04", time.RFC3339} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not now, a duration (2h) or a time (2006-01-02T15:04)", s)
}

// printFleet lists one row per box (its roles merged: the entries that
// share a root endpoint are one box).
func printFleet(w io.Writer, f *director.Federation) {
	type boxRow struct {
		name, site, version, digest string
		roles                       []string
		health                      string
		seen                        time.Time
	}
	byBox := map[string]*boxRow{}
	var order []string
	now := f.Now
	for _, s := range f.Servers {
		key := s.Root
		if key == "" {
			key = s.HTTPS
		}
		r := byBox[key]
		if r == nil {
			r = &boxRow{name: strings.TrimSuffix(s.Name, "-cache"), site: s.Site, version: s.Version, digest: s.ConfigDigest, seen: s.LastSeen}
			byBox[key] = r
			order = append(order, key)
		}
		r.roles = append(r.roles, s.Role)
		h := health(s, now)
		if r.health == "" || !strings.HasPrefix(h, "ok") {
			r.health = h
		}
		if s.LastSeen.After(r.seen) {
			r.seen = s.LastSeen
		}
	}
	sort.Slice(order, func(i, j int) bool {
		a, b := byBox[order[i]], byBox[order[j]]
		if a.site != b.site {
			return a.site < b.site
		}
		return a.name < b.name
	})
	fmt.Fprintf(w, "fleet of director %s: %d box(es)\n", f.Name, len(order))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BOX\tSITE\tROLES\tVERSION\tCONFIG\tLAST SEEN\tHEALTH")
	for _, k := range order {
		r := byBox[k]
		seen := "-"
		if !r.seen.IsZero() {
			seen = now.Sub(r.seen).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.name, orDash(r.site), strings.Join(r.roles, "+"), orDash(r.version), orDash(r.digest), seen, r.health)
	}
	tw.Flush()
}
