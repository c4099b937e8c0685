// Package partner is the job router's backend for another sitebox: jobs
// flock to a partner box's local domain through its job API.
package partner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/api"
	"sitebox/internal/jobs/spec"
)

// Backend sends jobs to another sitebox's local domain over its submit
// API (flocking between boxes of a region). The partner stages the
// inputs itself and delivers the outputs; this box keeps the job's
// record, polls it, and fetches its stdout and stderr when it ends.
type Backend struct {
	// API reaches the partner: its https://host:port, an HTTP client with
	// its CA, and this box's bearer token there (its jobs run there as
	// this box's identity).
	API api.Client
}

var _ jobs.Backend = (*Backend)(nil)

// StagesItself tells the router not to fetch inputs here.
func (b *Backend) StagesItself() {}

// Capacity: free CPUs are unknown from outside, so the router relies on
// its caps for partners.
func (b *Backend) Capacity(ctx context.Context) (jobs.Capacity, error) {
	return jobs.Capacity{FreeCPUs: -1}, nil
}

// Submit sends the job to the partner's local domain, keyed by its id
// here so that Find can tell whether a submission the box did not see
// through reached the partner.
func (b *Backend) Submit(ctx context.Context, j *jobs.Job) (string, error) {
	sp := j.Spec
	sp.Domains = []string{"local"}
	var resp struct{ Jobs []*jobs.Job }
	if err := b.API.Do(ctx, "POST", api.Prefix, api.Submission{Specs: []spec.Spec{sp}, Key: j.ID}, &resp); err != nil {
		return "", err
	}
	if len(resp.Jobs) != 1 {
		return "", fmt.Errorf("partner answered with %d jobs for one", len(resp.Jobs))
	}
	return resp.Jobs[0].ID, nil
}

// Find asks the partner for the job of j's current attempt, for a box
// that stopped between the partner's answer and the record of it: a job
// of this box's (the token's identity) keyed j.ID whose id is none of
// j.Remotes (earlier attempts). "" when the partner has none.
func (b *Backend) Find(ctx context.Context, j *jobs.Job) (string, error) {
	var resp struct{ Jobs []*jobs.Job }
	if err := b.API.Do(ctx, "GET", api.Prefix+"?key="+url.QueryEscape(j.ID), nil, &resp); err != nil {
		return "", fmt.Errorf("partner find %s: %w", j.ID, err)
	}
	found := ""
	for _, rj := range resp.Jobs {
		if rj.Key == j.ID && !slices.Contains(j.Remotes, rj.ID) {
			found = rj.ID
		}
	}
	return found, nil
}

// Poll reads each job's record at the partner; an ended job's logs are
// copied into the local sandbox for `sitebox logs`.
func (b *Backend) Poll(ctx context.Context, js []*jobs.Job) ([]jobs.Update, error) {
	var out []jobs.Update
	var errs []error
	for _, j := range js {
		var rj jobs.Job
		err := b.API.Do(ctx, "GET", api.Prefix+"/"+j.Remote, nil, &rj)
		if err != nil {
			var se *api.StatusError
			if errors.As(err, &se) && se.Code == http.StatusNotFound {
				out = append(out, jobs.Update{ID: j.ID, State: jobs.Lost, Reason: "the partner box no longer knows job " + j.Remote})
			} else {
				errs = append(errs, err)
			}
			continue
		}
		u := jobs.Update{ID: j.ID, State: rj.State, Reason: rj.Reason, ExitCode: rj.ExitCode,
			CPUTime: rj.CPUTime, WallTime: rj.WallTime, Started: rj.Started, Finished: rj.Finished}
		switch rj.State {
		case jobs.Idle, jobs.Staging:
			u.State = jobs.Routed
		case jobs.Completed, jobs.Failed, jobs.Cancelled, jobs.Lost:
			b.fetchLogs(ctx, j)
		}
		out = append(out, u)
	}
	return out, errors.Join(errs...)
}

func (b *Backend) fetchLogs(ctx context.Context, j *jobs.Job) {
	if err := os.MkdirAll(j.SandboxDir, 0o755); err != nil {
		return
	}
	for stream, name := range map[string]string{"stdout": j.Spec.Stdout, "stderr": j.Spec.Stderr} {
		f, err := os.Create(filepath.Join(j.SandboxDir, name))
		if err != nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		b.API.Do(lctx, "GET", api.Prefix+"/"+j.Remote+"/logs?stream="+stream, nil, f)
		cancel()
		f.Close()
	}
}

// Cancel cancels the job at the partner.
func (b *Backend) Cancel(ctx context.Context, j *jobs.Job) error {
	return b.API.Do(ctx, "DELETE", api.Prefix+"/"+j.Remote, nil, nil)
}
