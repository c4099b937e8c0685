package jobs

import (
	"context"
	"errors"
	"strings"

	"fmt"
	"io"
	"os"
	"path/filepath"
	"sitebox/internal/jobs/spec"
	"slices"
	"time"

	"sitebox/internal/jobs/local"
)

// ErrNoOutput is returned for a file that is not one of a job's outputs.
var ErrNoOutput = errors.New("not an output of the job")

// OutputFile is one file `sitebox fetch` brings back: the sandbox name
// and the name it gets at the submitter (its remap).
type OutputFile struct {
	Name   string `json:"name"`
	SaveAs string `json:"save_as"`
}

// Outputs lists what a submitter fetches from job id: its stdout, its
// stderr and its declared outputs, once the job has ended.
func (s *Service) Outputs(id string) ([]OutputFile, error) {
	j, ok := s.Get(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if !j.State.Final() {
		return nil, fmt.Errorf("job %s has not ended (%s): its outputs are not final", id, j.State)
	}
	if j.SandboxRemoved {
		return nil, fmt.Errorf("job %s's sandbox was removed %v after it ended (the box's sandbox retention)", id, s.cfg.Retention)
	}
	out := []OutputFile{{j.Spec.Stdout, j.Spec.Stdout}, {j.Spec.Stderr, j.Spec.Stderr}}
	for _, o := range j.Spec.Outputs {
		if local.CheckSandboxFile(j.SandboxDir, o) == nil {
			out = append(out, OutputFile{o, j.Spec.OutputName(o)})
		}
	}
	return out, nil
}

// OpenOutput opens file name of job id's outputs (see Outputs).
func (s *Service) OpenOutput(id, name string) (io.ReadCloser, error) {
	files, err := s.Outputs(id)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(files, func(f OutputFile) bool { return f.Name == name }) {
		return nil, fmt.Errorf("%w: %q (job %s)", ErrNoOutput, name, id)
	}
	j, _ := s.Get(id)
	return local.OpenInSandbox(j.SandboxDir, name, os.O_RDONLY, 0)
}

// sweepLocked removes the sandboxes of jobs that ended longer than the
// retention ago: their outputs are delivered, or were the submitter's to
// fetch until then. At most a batch per call, so a tick stays short.
func (s *Service) sweepLocked(now time.Time) {
	if s.cfg.Retention < 0 {
		return
	}
	n := 0
	for _, j := range s.jobs {
		if !j.State.Final() || j.SandboxRemoved || j.Finished.IsZero() || now.Sub(j.Finished) < s.cfg.Retention {
			continue
		}
		if _, busy := s.local[j.ID]; busy || j.SandboxDir == "" || filepath.Dir(j.SandboxDir) != filepath.Clean(s.cfg.Dir) {
			continue
		}
		if err := os.RemoveAll(j.SandboxDir); err != nil {
			s.log.Warn("cannot remove an ended job's sandbox", "job", j.ID, "err", err)
			continue
		}
		local.RemoveControl(j.SandboxDir)
		j.SandboxRemoved = true
		s.dirty[j.ID] = true
		if n++; n >= 100 {
			return
		}
	}
}

// deliverAsync checks a successful job's declared outputs (one it did
// not write fails the job, by name) and copies them to their
// destination, or keeps them in the sandbox for `sitebox fetch`; then it
// completes the job.
func (s *Service) deliverAsync(j *Job) {
	if missing := missingOutputs(j.Spec, j.SandboxDir); len(missing) > 0 {
		s.end(j, Failed, fmt.Sprintf("exited with code 0 but did not write its declared output(s): %s", strings.Join(missing, ", ")))
		return
	}
	if len(j.Spec.Outputs) == 0 {
		s.end(j, Completed, "exited with code 0")
		return
	}
	if j.Spec.OutputDestination == "" {
		s.end(j, Completed, fmt.Sprintf("exited with code 0; %d output(s) kept for `sitebox fetch %s`", len(j.Spec.Outputs), j.ID))
		return
	}
	j.Reason = "delivering outputs"
	s.dirty[j.ID] = true
	spec, dir, as := j.Spec, j.SandboxDir, j.StageOwner()
	// Not bound to Run's ctx: a delivery under way when the box stops
	// finishes, as the job it completes did.
	go func() {
		err := s.deliver(context.Background(), as, spec, dir)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.end(j, Failed, "outputs: "+err.Error())
			return
		}
		s.end(j, Completed, fmt.Sprintf("exited with code 0; %d output(s) delivered to %s", len(spec.Outputs), spec.OutputDestination))
	}()
}

// missingOutputs are the declared outputs not in the sandbox as plain
// files, each with why when it is there but not one (a link, a
// directory).
func missingOutputs(sp spec.Spec, dir string) []string {
	var out []string
	for _, o := range sp.Outputs {
		err := local.CheckSandboxFile(dir, o)
		switch {
		case err == nil:
		case errors.Is(err, os.ErrNotExist):
			out = append(out, o)
		default:
			out = append(out, fmt.Sprintf("%s (%v)", o, err))
		}
	}
	return out
}

func (s *Service) deliver(ctx context.Context, as StageOwner, sp spec.Spec, dir string) error {
	if s.cfg.Stager == nil {
		return fmt.Errorf("no stager configured to deliver to %s", sp.OutputDestination)
	}
	for _, o := range sp.Outputs {
		if err := local.CheckSandboxFile(dir, o); err != nil {
			return fmt.Errorf("%s: %w", o, err)
		}
		if err := s.cfg.Stager.Deliver(ctx, as, dir+"/"+o, sp.OutputDestination, sp.OutputName(o)); err != nil {
			return fmt.Errorf("%s: %w", o, err)
		}
	}
	return nil
}
