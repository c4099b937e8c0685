package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/tlsutil"
)

// jobClient talks to a box's submit API with the user's token.
type jobClient struct {
	url      string
	caFile   string
	insecure bool
	api      *jobsapi.Client // made by the first request
}

func (c *jobClient) add(cmd *cobra.Command) {
	def := os.Getenv("SITEBOX_URL")
	if def == "" {
		def = "https://localhost:8443"
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&c.url, "url", def, "the box's https:// URL (env SITEBOX_URL)")
	fl.StringVar(&c.caFile, "ca", os.Getenv("SITEBOX_CA"), "extra CA certificate (PEM) for the box (env SITEBOX_CA)")
	fl.BoolVar(&c.insecure, "insecure", os.Getenv("SITEBOX_INSECURE") == "1", "do not verify the box's certificate")
}

// do sends one request; out (a pointer or an io.Writer) gets the answer.
// The token and the HTTPS client are set up once, by the first request.
func (c *jobClient) do(method, path string, body, out any) error {
	if c.api == nil {
		tok, err := bearerToken()
		if err != nil {
			return err
		}
		if tok == "" {
			return errors.New("no token: set BEARER_TOKEN or BEARER_TOKEN_FILE (e.g. from `sitebox token issue`)")
		}
		hc, err := tlsutil.HTTPClient(c.caFile, c.insecure, 2*time.Minute)
		if err != nil {
			return err
		}
		c.api = &jobsapi.Client{URL: c.url, HTTP: hc, Token: func() (string, error) { return tok, nil }}
	}
	err := c.api.Do(context.Background(), method, path, body, out)
	// The box's own words suffice on a terminal.
	var se *jobsapi.StatusError
	if errors.As(err, &se) {
		if se.FromAPI {
			return errors.New(se.Msg)
		}
		return fmt.Errorf("%s: %s", se.Status, se.Msg)
	}
	return err
}

// addJobCommands registers submit, jobs, cancel, logs and the hidden
// job supervisor and reaper. The token needs compute.create to submit,
// compute.read to list and read logs, compute.cancel (or
// compute.modify) to cancel.
func addJobCommands(root *cobra.Command) {
	var c jobClient
	var wait, dryRun bool
	submit := &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit jobs from a TOML job file or an HTCondor-style submit file (token scope compute.create)",
		Example: `  sitebox submit analysis.sub          # executable = ..., queue 10, +Domains = "local,site"
  BEARER_TOKEN=$(sitebox token issue --sub alice --scope "compute.create compute.read compute.cancel") sitebox submit --url https://t3-box:8443 job.toml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			// The box's domains, so an unknown one is reported with its line.
			var known struct {
				Domains []string
				Sites   map[string][]string
			}
			if err := c.do("GET", jobsapi.Prefix+"/domains", nil, &known); err != nil {
				return fmt.Errorf("submit: %w", err)
			}
			specs, err := spec.ParseFileSites(args[0], data, func(d string) bool { return slices.Contains(known.Domains, d) },
				func(site string) []string { return known.Sites[site] })
			if err != nil {
				return err
			}
			if dryRun {
				printDryRun(cmd.OutOrStdout(), specs)
				return nil
			}
			shared, err := attachLocalFiles(".", specs)
			if err != nil {
				return err
			}
			var resp struct{ Jobs []*jobs.Job }
			if err := c.do("POST", jobsapi.Prefix, jobsapi.Submission{Specs: specs, Shared: shared}, &resp); err != nil {
				return fmt.Errorf("submit: %w", err)
			}
			ids := make([]string, len(resp.Jobs))
			for i, j := range resp.Jobs {
				ids[i] = j.ID
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d job(s) submitted: %s\n", len(ids), strings.Join(ids, " "))
			if !wait {
				return nil
			}
			return c.waitAndFetch(cmd.OutOrStdout(), ids)
		},
	}
	submit.Flags().BoolVar(&wait, "wait", false, "wait for the jobs to end, then fetch their outputs here (as condor_transfer_data)")
	submit.Flags().BoolVar(&dryRun, "dry-run", false, "print each job's executable, arguments, environment, resources and domains; submit nothing")
	c.add(submit)
	var fetchDir string
	fetch := &cobra.Command{
		Use:   "fetch ID...",
		Short: "Download ended jobs' stdout, stderr and outputs (renamed by transfer_output_remaps) into the current directory (token scope compute.read)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, id := range args {
				files, err := c.fetchOutputs(id, fetchDir)
				for _, f := range files {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		},
	}
	fetch.Flags().StringVar(&fetchDir, "dir", ".", "where to write the files")
	c.add(fetch)

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
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(resp.Jobs)
			}
			printJobs(cmd.OutOrStdout(), resp.Jobs)
			return nil
		},
	}
	c.add(list)
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	status := &cobra.Command{
		Use:   "status ID",
		Short: "Show one job: state, reason, domain, times, CPU",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var j jobs.Job
			if err := c.do("GET", jobsapi.Prefix+"/"+args[0], nil, &j); err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(j)
			}
			printJob(cmd.OutOrStdout(), &j)
			return nil
		},
	}
	status.Flags().BoolVar(&asJSON, "json", false, "print JSON")
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
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			fmt.Fprint(cmd.OutOrStdout(), r.Format())
			return nil
		},
	}
	report.Flags().StringVar(&since, "since", "7d", "period: 7d, 12h, 90m")
	report.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.AddCommand(status, report)

	cancel := &cobra.Command{
		Use:   "cancel ID...",
		Short: "Cancel jobs (token scope compute.cancel or compute.modify)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, id := range args {
				if err := c.do("DELETE", jobsapi.Prefix+"/"+id, nil, nil); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", id, err))
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s cancelled\n", id)
			}
			return errors.Join(errs...)
		},
	}
	c.add(cancel)
	var stderr bool
	logs := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a job's standard output (--stderr: its standard error; token scope compute.read)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			stream := "stdout"
			if stderr {
				stream = "stderr"
			}
			return c.do("GET", jobsapi.Prefix+"/"+args[0]+"/logs?stream="+stream, nil, cmd.OutOrStdout())
		},
	}
	logs.Flags().BoolVar(&stderr, "stderr", false, "standard error instead of output")
	c.add(logs)
	exec := &cobra.Command{
		Use:    "job-exec SANDBOX",
		Hidden: true,
		Short:  "Supervise one job (started by the box)",
		Args:   cobra.ExactArgs(1),
		Run:    func(_ *cobra.Command, args []string) { os.Exit(local.RunSupervisor(args[0])) },
	}
	reap := &cobra.Command{
		Use:    "job-reap",
		Hidden: true,
		Short:  "Kill every process of the slot user it runs as (started by the box)",
		Args:   cobra.NoArgs,
		Run:    func(_ *cobra.Command, _ []string) { os.Exit(local.RunReaper()) },
	}
	root.AddCommand(submit, list, cancel, logs, fetch, exec, reap)
}

// attachLocalFiles reads the inputs and executable that are local files
// (relative to the current directory, as condor_submit reads them) into
// the submission, as HTCondor transfers them: each file once, by the
// SHA-256 of its bytes, however many jobs use it.
func attachLocalFiles(dir string, specs []spec.Spec) (map[string][]byte, error) {
	shared := map[string][]byte{}
	byPath := map[string]string{} // path → ref
	ship := func(p string) (string, error) {
		if ref, ok := byPath[p]; ok {
			return ref, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		ref := hex.EncodeToString(sum[:])
		shared[ref], byPath[p] = b, ref
		return ref, nil
	}
	for i := range specs {
		sp := &specs[i]
		for k, in := range sp.Inputs {
			name, ok := strings.CutPrefix(in.From, spec.LocalInputPrefix)
			if !ok {
				continue
			}
			p := name
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			ref, err := ship(p)
			if err != nil {
				return nil, fmt.Errorf("transfer_input_files: %w", err)
			}
			sp.Inputs[k] = spec.Input{As: filepath.Base(name), Ref: ref}
			if in.As != "" {
				sp.Inputs[k].As = in.As
			}
		}
		// A relative executable next to the submit file is shipped too.
		if !filepath.IsAbs(sp.Executable) {
			p := filepath.Join(dir, sp.Executable)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				ref, err := ship(p)
				if err != nil {
					return nil, fmt.Errorf("executable: %w", err)
				}
				sp.Inputs = append(sp.Inputs, spec.Input{As: filepath.Base(sp.Executable), Ref: ref})
				sp.Executable = filepath.Base(sp.Executable)
			}
		}
	}
	return shared, nil
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

// waitAndFetch waits for ids to end, fetches their outputs here, and
// fails when any job did not complete.
func (c *jobClient) waitAndFetch(w io.Writer, ids []string) error {
	js, err := c.waitJobs(ids, time.Second)
	if err != nil {
		return err
	}
	var errs []error
	for _, j := range js {
		fmt.Fprintf(w, "%s %s: %s\n", j.ID, j.State, j.Reason)
		if _, err := c.fetchOutputs(j.ID, "."); err != nil {
			errs = append(errs, err)
		}
		if j.State != jobs.Completed {
			errs = append(errs, fmt.Errorf("job %s %s: %s", j.ID, j.State, j.Reason))
		}
	}
	return errors.Join(errs...)
}

// printDryRun shows how the box reads a job file, proc by proc.
func printDryRun(w io.Writer, specs []spec.Spec) {
	for i, sp := range specs {
		fmt.Fprintf(w, "proc %d\n  executable:  %s\n  arguments:   %q\n", i, sp.Executable, sp.Arguments)
		keys := make([]string, 0, len(sp.Env))
		for k := range sp.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "  environment: %s=%s\n", k, sp.Env[k])
		}
		fmt.Fprintf(w, "  resources:   cpus=%d memory_mb=%d disk_mb=%d wall_time=%v backfill=%v\n", max(sp.CPUs, 1), sp.MemoryMB, sp.DiskMB, sp.WallTime, sp.Backfill)
		fmt.Fprintf(w, "  domains:     %s\n", strings.Join(sp.Domains, ", "))
		for _, in := range sp.Inputs {
			fmt.Fprintf(w, "  input:       %s\n", in.From)
		}
		for _, o := range sp.Outputs {
			fmt.Fprintf(w, "  output:      %s -> %s\n", o, sp.OutputName(o))
		}
	}
}
