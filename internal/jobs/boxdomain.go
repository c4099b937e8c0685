package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// BoxBackend sends jobs to another sitebox's local domain over its submit
// API (flocking between boxes of a region). The partner stages the
// inputs itself and delivers the outputs; this box keeps the job's
// record, polls it, and fetches its stdout and stderr when it ends.
type BoxBackend struct {
	URL    string       // the partner's https://host:port
	Client *http.Client // with the partner's CA
	// Token is this box's bearer token at the partner (its jobs run there
	// as this box's identity).
	Token func() (string, error)
}

var _ Backend = (*BoxBackend)(nil)

// StagesItself tells the router not to fetch inputs here.
func (b *BoxBackend) StagesItself() {}

func (b *BoxBackend) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(b.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	tok, err := b.Token()
	if err != nil {
		return fmt.Errorf("token for %s: %w", b.URL, err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var e apiError
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(msg, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error)
		}
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(msg)))
	}
	if out == nil {
		return nil
	}
	if w, ok := out.(io.Writer); ok {
		_, err = io.Copy(w, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Capacity asks the partner for its domains' jobs; free CPUs are unknown
// from outside, so the router relies on its caps for partners.
func (b *BoxBackend) Capacity(ctx context.Context) (Capacity, error) {
	return Capacity{FreeCPUs: -1}, nil
}

// Submit sends the job to the partner's local domain.
func (b *BoxBackend) Submit(ctx context.Context, j *Job) (string, error) {
	sp := j.Spec
	sp.Domains = []string{"local"}
	var resp struct{ Jobs []*Job }
	if err := b.do(ctx, "POST", APIPrefix, Submission{Specs: []Spec{sp}}, &resp); err != nil {
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
		err := b.do(ctx, "GET", APIPrefix+"/"+j.Remote, nil, &rj)
		if err != nil {
			if strings.Contains(err.Error(), "404") {
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
		b.do(lctx, "GET", APIPrefix+"/"+j.Remote+"/logs?stream="+stream, nil, f)
		cancel()
		f.Close()
	}
}

// Cancel cancels the job at the partner.
func (b *BoxBackend) Cancel(ctx context.Context, j *Job) error {
	return b.do(ctx, "DELETE", APIPrefix+"/"+j.Remote, nil, nil)
}
