package jobs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
