package jobs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sitebox/internal/jobs/spec"
	"time"
)

// BoxBackend sends jobs to another sitebox's local domain over its submit
// API (flocking between boxes of a region). The partner stages the
// inputs itself and delivers the outputs; this box keeps the job's
// record, polls it, and fetches its stdout and stderr when it ends.
type BoxBackend struct {
	// API reaches the partner: its https://host:port, an HTTP client with
	// its CA, and this box's bearer token there (its jobs run there as
	// this box's identity).
	API Client
}

var _ Backend = (*BoxBackend)(nil)

// StagesItself tells the router not to fetch inputs here.
func (b *BoxBackend) StagesItself() {}

// Capacity: free CPUs are unknown from outside, so the router relies on
// its caps for partners.
func (b *BoxBackend) Capacity(ctx context.Context) (Capacity, error) {
	return Capacity{FreeCPUs: -1}, nil
}

// Submit sends the job to the partner's local domain.
func (b *BoxBackend) Submit(ctx context.Context, j *Job) (string, error) {
	sp := j.Spec
	sp.Domains = []string{"local"}
	var resp struct{ Jobs []*Job }
	if err := b.API.Do(ctx, "POST", APIPrefix, Submission{Specs: []spec.Spec{sp}}, &resp); err != nil {
		return "", err
	}
	if len(resp.Jobs) != 1 {
		return "", fmt.Errorf("partner answered with %d jobs for one", len(resp.Jobs))
	}
	return resp.Jobs[0].ID, nil
}

// Poll reads each job's record at the partner; an ended job's logs are
// copied into the local sandbox for `sitebox logs`.
func (b *BoxBackend) Poll(ctx context.Context, js []*Job) ([]Update, error) {
	var out []Update
	var errs []error
	for _, j := range js {
		var rj Job
		err := b.API.Do(ctx, "GET", APIPrefix+"/"+j.Remote, nil, &rj)
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Code == http.StatusNotFound {
				out = append(out, Update{ID: j.ID, State: Lost, Reason: "the partner box no longer knows job " + j.Remote})
			} else {
				errs = append(errs, err)
			}
			continue
		}
		u := Update{ID: j.ID, State: rj.State, Reason: rj.Reason, ExitCode: rj.ExitCode,
			CPUTime: rj.CPUTime, WallTime: rj.WallTime, Started: rj.Started, Finished: rj.Finished}
		switch rj.State {
		case Idle, Staging:
			u.State = Routed
		case Completed, Failed, Cancelled, Lost:
			b.fetchLogs(ctx, j)
		}
		out = append(out, u)
	}
	return out, errors.Join(errs...)
}

func (b *BoxBackend) fetchLogs(ctx context.Context, j *Job) {
	if err := os.MkdirAll(j.SandboxDir, 0o755); err != nil {
		return
	}
	for stream, name := range map[string]string{"stdout": j.Spec.Stdout, "stderr": j.Spec.Stderr} {
		f, err := os.Create(filepath.Join(j.SandboxDir, name))
		if err != nil {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		b.API.Do(lctx, "GET", APIPrefix+"/"+j.Remote+"/logs?stream="+stream, nil, f)
		cancel()
		f.Close()
	}
}

// Cancel cancels the job at the partner.
func (b *BoxBackend) Cancel(ctx context.Context, j *Job) error {
	return b.API.Do(ctx, "DELETE", APIPrefix+"/"+j.Remote, nil, nil)
}
