package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
)

// listCommand builds `sitebox jobs`, which lists the user's jobs, with
// its subcommands status and report.
func listCommand(c *jobClient) *cobra.Command {
	var asJSON bool
	list := &cobra.Command{
		Use:   "jobs",
		Short: "List your jobs, with the reason each one waits (token scope compute.read)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var resp struct{ Jobs []*jobs.Job }
			if err := c.do("GET", jobsapi.Prefix, nil, &resp); err != nil {
				return err
			}
			return writeJSONOr(cmd.OutOrStdout(), asJSON, resp.Jobs, func(w io.Writer) { printJobs(w, resp.Jobs) })
		},
	}
	c.add(list)
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.AddCommand(statusCommand(c), reportCommand(c))
	return list
}

// statusCommand builds `sitebox jobs status ID`, which shows one job.
// It takes the box flags from its parent, `sitebox jobs`.
func statusCommand(c *jobClient) *cobra.Command {
	var asJSON bool
	status := &cobra.Command{
		Use:   "status ID",
		Short: "Show one job: state, reason, domain, times, CPU",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var j jobs.Job
			if err := c.do("GET", jobsapi.Prefix+"/"+args[0], nil, &j); err != nil {
				return err
			}
			return writeJSONOr(cmd.OutOrStdout(), asJSON, j, func(w io.Writer) { printJob(w, &j) })
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return status
}

// reportCommand builds `sitebox jobs report`, the accounting report for
// a period. It takes the box flags from its parent, `sitebox jobs`.
func reportCommand(c *jobClient) *cobra.Command {
	var asJSON bool
	var since string
	report := &cobra.Command{
		Use:   "report",
		Short: "Accounting: CPU efficiency and utilization per class for a period",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r jobs.Report
			if err := c.do("GET", jobsapi.Prefix+"/report?since="+since, nil, &r); err != nil {
				return err
			}
			return writeJSONOr(cmd.OutOrStdout(), asJSON, r, func(w io.Writer) { fmt.Fprint(w, r.Format()) })
		},
	}
	report.Flags().StringVar(&since, "since", "7d", "period: 7d, 12h, 90m")
	report.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return report
}

// writeJSONOr writes v to w as JSON when asJSON is set, and otherwise
// calls text to print it for people: the --json switch of the job
// listing commands.
func writeJSONOr(w io.Writer, asJSON bool, v any, text func(io.Writer)) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	text(w)
	return nil
}

func printJobs(w io.Writer, js []*jobs.Job) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDOMAIN\tCPUS\tSUBMITTED\tREASON")
	for _, j := range js {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", j.ID, j.State, dash(j.Domain), j.Spec.CPUs, j.Submitted.Local().Format("01-02 15:04:05"), j.Reason)
	}
	tw.Flush()
	if len(js) == 0 {
		fmt.Fprintln(w, "(no jobs)")
	}
}

func printJob(w io.Writer, j *jobs.Job) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("ID", j.ID)
	row("Owner", j.Owner+" (VO "+dash(j.VO)+", "+map[bool]string{true: "grid", false: "local user"}[j.Grid]+")")
	if j.Auth != "" {
		// How the owner proved who they are, and an X.509 owner's VOMS
		// attributes: what the job's staging acts with.
		row("Credential", strings.TrimSpace(j.Auth+" "+strings.Join(j.FQANs, " ")))
	}
	row("State", string(j.State))
	row("Reason", j.Reason)
	row("Domain", dash(j.Domain)+" "+j.Remote)
	row("Command", strings.TrimSpace(j.Spec.Executable+" "+strings.Join(j.Spec.Arguments, " ")))
	row("Requests", fmt.Sprintf("%d CPUs, %d MB", j.Spec.CPUs, j.Spec.MemoryMB))
	row("Submitted", j.Submitted.Local().Format(time.DateTime))
	if !j.Started.IsZero() {
		row("Started", j.Started.Local().Format(time.DateTime))
	}
	if !j.Finished.IsZero() {
		row("Finished", j.Finished.Local().Format(time.DateTime))
		row("Exit code", fmt.Sprint(j.ExitCode))
	}
	row("CPU / wall", fmt.Sprintf("%.1f s / %.1f s", j.CPUTime, j.WallTime))
	if j.Preempted > 0 {
		row("Preempted", fmt.Sprint(j.Preempted))
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
