package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/fleet"
)

// newDowntimeCmd is `sitebox downtime`: planned work on this box, kept in
// its state directory (fleet.DowntimeFile) and advertised to its
// directors.
func newDowntimeCmd() *cobra.Command {
	af := &adminFlags{}
	downtime := &cobra.Command{
		Use:   "downtime",
		Short: "Planned work on this box: directors route around it and the fleet view says so",
	}
	af.add(downtime)
	downtime.AddCommand(newDowntimeAddCmd(af), newDowntimeListCmd(af), newDowntimeEndCmd(af))
	return downtime
}

func newDowntimeAddCmd(af *adminFlags) *cobra.Command {
	var start, end, reason string
	add := &cobra.Command{
		Use:     "add",
		Short:   "Announce a downtime (takes effect with the box's next advertisement)",
		Example: `  sitebox downtime add --start now --end 2h --reason "disk replacement"` + "\n" + `  sitebox downtime add --start 2026-12-01T08:00 --end 2026-12-01T12:00 --reason "kernel update"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := af.resolveStateDir(cmd)
			if err != nil {
				return err
			}
			now := time.Now()
			s, err := parseWhen(start, now, now)
			if err != nil {
				return fmt.Errorf("--start: %w", err)
			}
			e, err := parseWhen(end, s, now)
			if err != nil {
				return fmt.Errorf("--end: %w", err)
			}
			if !e.After(s) || !e.After(now) {
				return fmt.Errorf("the downtime must end after it starts and in the future (%s → %s)", s.Format(time.DateTime), e.Format(time.DateTime))
			}
			if strings.TrimSpace(reason) == "" {
				return fmt.Errorf("--reason is required: operators and users read it")
			}
			ds, err := fleet.LoadDowntimes(dir)
			if err != nil {
				return err
			}
			ds = append(ds, fleet.Downtime{Start: s, End: e, Reason: reason})
			if err := fleet.SaveDowntimes(dir, ds); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "downtime %s → %s: %s\n", s.Format("2006-01-02 15:04"), e.Format("2006-01-02 15:04"), reason)
			return nil
		},
	}
	add.Flags().StringVar(&start, "start", "now", `start: "now", a duration from now ("30m"), or a time (2006-01-02T15:04)`)
	add.Flags().StringVar(&end, "end", "", `end: a duration after the start ("2h") or a time`)
	add.Flags().StringVar(&reason, "reason", "", "why (shown in the fleet view)")
	return add
}

func newDowntimeListCmd(af *adminFlags) *cobra.Command {
	list := &cobra.Command{
		Use:   "list",
		Short: "Show the planned downtimes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := af.resolveStateDir(cmd)
			if err != nil {
				return err
			}
			ds, err := fleet.LoadDowntimes(dir)
			if err != nil {
				return err
			}
			now := time.Now()
			for i, d := range ds {
				if d.End.Before(now) {
					continue
				}
				state := "planned"
				if d.Active(now) {
					state = "ACTIVE"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d  %-7s  %s → %s  %s\n", i+1, state, d.Start.Format("2006-01-02 15:04"), d.End.Format("2006-01-02 15:04"), d.Reason)
			}
			if len(ds) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no downtime planned")
			}
			return nil
		},
	}
	return list
}

func newDowntimeEndCmd(af *adminFlags) *cobra.Command {
	end2 := &cobra.Command{
		Use:   "end",
		Short: "End every active or planned downtime now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := af.resolveStateDir(cmd)
			if err != nil {
				return err
			}
			if err := fleet.SaveDowntimes(dir, nil); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "no downtime: the box is back in service at its next advertisement")
			return nil
		},
	}
	return end2
}
