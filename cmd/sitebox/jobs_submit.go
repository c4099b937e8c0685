package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/spec"
)

// submitCommand builds `sitebox submit FILE`: it parses the job file
// against the box's domains, then either prints it (--dry-run) or
// submits it with its local files attached, and with --wait waits for
// the jobs and fetches their outputs.
func submitCommand(c *jobClient) *cobra.Command {
	var wait, dryRun bool
	submit := &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit jobs from a TOML job file or an HTCondor-style submit file (token scope compute.create)",
		Example: `  sitebox submit analysis.sub          # executable = ..., queue 10, +Domains = "local,site"
  BEARER_TOKEN=$(sitebox token issue --sub alice --scope "compute.create compute.read compute.cancel") sitebox submit --url https://t3-box:8443 job.toml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			specs, err := c.parseJobFile(args[0])
			if err != nil {
				return err
			}
			if dryRun {
				printDryRun(cmd.OutOrStdout(), specs)
				return nil
			}
			ids, err := c.submitSpecs(specs)
			if err != nil {
				return err
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
	return submit
}

// parseJobFile reads and parses the job file at path, asking the box for
// its domains and sites first so an unknown one is reported with its line.
func (c *jobClient) parseJobFile(path string) ([]spec.Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var known struct {
		Domains    []string
		Sites      map[string][]string
		Attributes map[string]map[string]any
	}
	if err := c.do("GET", jobsapi.Prefix+"/domains", nil, &known); err != nil {
		return nil, fmt.Errorf("submit: %w", err)
	}
	return spec.ParseFileFor(path, data, spec.Target{
		Known: func(d string) bool { return slices.Contains(known.Domains, d) },
		Sites: func(site string) []string { return known.Sites[site] },
		Attrs: known.Attributes,
	})
}

// submitSpecs attaches the specs' local files (from the current
// directory), submits them to the box, and returns the new jobs' IDs.
func (c *jobClient) submitSpecs(specs []spec.Spec) ([]string, error) {
	shared, err := attachLocalFiles(".", specs)
	if err != nil {
		return nil, err
	}
	var resp struct{ Jobs []*jobs.Job }
	if err := c.do("POST", jobsapi.Prefix, jobsapi.Submission{Specs: specs, Shared: shared}, &resp); err != nil {
		return nil, fmt.Errorf("submit: %w", err)
	}
	ids := make([]string, len(resp.Jobs))
	for i, j := range resp.Jobs {
		ids[i] = j.ID
	}
	return ids, nil
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
		// Into the job's initialdir, as condor_submit returns them.
		if _, err := c.fetchOutputs(j.ID, filepath.Join(".", j.Spec.InitialDir)); err != nil {
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
		if sp.Container != "" {
			fmt.Fprintf(w, "  container:   %s\n", sp.Container)
		}
		if sp.InitialDir != "" {
			fmt.Fprintf(w, "  initialdir:  %s\n", sp.InitialDir)
		}
		for _, in := range sp.Inputs {
			fmt.Fprintf(w, "  input:       %s\n", in.From)
		}
		for _, o := range sp.Outputs {
			fmt.Fprintf(w, "  output:      %s -> %s\n", o, sp.OutputName(o))
		}
	}
}
