package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	jobsapi "sitebox/internal/jobs/api"
	"sitebox/internal/jobs/local"
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

// addJobCommands registers submit, jobs (with status and report),
// cancel, logs, fetch and the hidden job supervisor and reaper, all
// sharing one box client. The token needs compute.create to submit,
// compute.read to list and read logs, compute.cancel (or
// compute.modify) to cancel.
func addJobCommands(root *cobra.Command) {
	c := &jobClient{}
	root.AddCommand(submitCommand(c), listCommand(c), cancelCommand(c), logsCommand(c),
		fetchCommand(c), jobExecCommand(), jobReapCommand())
}

// cancelCommand builds `sitebox cancel ID...`: it cancels each job and
// reports the ones it could not cancel together at the end.
func cancelCommand(c *jobClient) *cobra.Command {
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
	return cancel
}

// logsCommand builds `sitebox logs ID`: it streams a job's standard
// output, or with --stderr its standard error, to the terminal.
func logsCommand(c *jobClient) *cobra.Command {
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
	return logs
}

// jobExecCommand builds the hidden `sitebox job-exec SANDBOX` the box
// starts to supervise one local job.
func jobExecCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "job-exec SANDBOX",
		Hidden: true,
		Short:  "Supervise one job (started by the box)",
		Args:   cobra.ExactArgs(1),
		Run:    func(_ *cobra.Command, args []string) { os.Exit(local.RunSupervisor(args[0])) },
	}
}

// jobReapCommand builds the hidden `sitebox job-reap` the box starts as
// a slot user to kill that user's leftover processes.
func jobReapCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "job-reap",
		Hidden: true,
		Short:  "Kill every process of the slot user it runs as (started by the box)",
		Args:   cobra.NoArgs,
		Run:    func(_ *cobra.Command, _ []string) { os.Exit(local.RunReaper()) },
	}
}
