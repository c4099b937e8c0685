package main

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/spec"
)

// fetchOutputs downloads an ended job's stdout, stderr and declared
// outputs into dir under the names they are saved as (their remaps), as
// condor_transfer_data does. It returns the paths written.
func (c *jobClient) fetchOutputs(id, dir string) ([]string, error) {
	var resp struct{ Files []jobs.OutputFile }
	if err := c.do("GET", jobsapi.Prefix+"/"+url.PathEscape(id)+"/outputs", nil, &resp); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", id, err)
	}
	var wrote []string
	for _, f := range resp.Files {
		// The names come from the box: never let one write outside dir.
		if msg := spec.SandboxPathProblem(f.SaveAs); msg != "" {
			return wrote, fmt.Errorf("fetch %s: the box names an output %s", id, msg)
		}
		dst := filepath.Join(dir, filepath.FromSlash(f.SaveAs))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return wrote, fmt.Errorf("fetch %s: %w", id, err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(dst), ".fetch-*")
		if err != nil {
			return wrote, fmt.Errorf("fetch %s: %w", id, err)
		}
		err = c.do("GET", jobsapi.Prefix+"/"+url.PathEscape(id)+"/outputs?file="+url.QueryEscape(f.Name), nil, io.Writer(tmp))
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), dst)
		}
		if err != nil {
			os.Remove(tmp.Name())
			return wrote, fmt.Errorf("fetch %s: %s: %w", id, f.Name, err)
		}
		wrote = append(wrote, dst)
	}
	return wrote, nil
}

// waitJobs polls the jobs until every one has ended, and returns them.
func (c *jobClient) waitJobs(ids []string, every time.Duration) ([]*jobs.Job, error) {
	out := make([]*jobs.Job, len(ids))
	for i := 0; i < len(ids); {
		var j jobs.Job
		if err := c.do("GET", jobsapi.Prefix+"/"+url.PathEscape(ids[i]), nil, &j); err != nil {
			return nil, err
		}
		if !j.State.Final() {
			time.Sleep(every)
			continue
		}
		out[i] = &j
		i++
	}
	return out, nil
}

// fetchCommand builds `sitebox fetch ID...`: it downloads each ended
// job's outputs, prints the paths written, and reports the failures
// together at the end.
func fetchCommand(c *jobClient) *cobra.Command {
	var fetchDir string
	fetch := &cobra.Command{
		Use:   "fetch ID...",
		Short: "Download ended jobs' stdout, stderr and outputs (renamed by transfer_output_remaps) into the current directory (token scope compute.read)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, id := range args {
				dir := fetchDir
				var j jobs.Job
				if !cmd.Flags().Changed("dir") && c.do("GET", jobsapi.Prefix+"/"+url.PathEscape(id), nil, &j) == nil {
					dir = filepath.Join(".", j.Spec.InitialDir) // the job's initialdir, as condor_transfer_data
				}
				files, err := c.fetchOutputs(id, dir)
				for _, f := range files {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				errs = append(errs, err)
			}
			return errors.Join(errs...)
		},
	}
	fetch.Flags().StringVar(&fetchDir, "dir", ".", "where to write the files (default: the job's initialdir, else here)")
	c.add(fetch)
	return fetch
}
