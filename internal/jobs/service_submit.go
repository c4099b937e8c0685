package jobs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/jobs/spec"
)

// Submit queues specs as one cluster for who; each spec is validated
// again (the API's input is untrusted). It returns the new jobs.
func (s *Service) Submit(who Submitter, specs []spec.Spec) ([]*Job, error) {
	return s.submit(who, "", specs)
}

func (s *Service) submit(who Submitter, key string, specs []spec.Spec) ([]*Job, error) {
	owner := who.Owner
	if owner.Subject == "" || owner.Issuer == "" {
		return nil, errors.New("a job needs an owner (the token's issuer and subject)")
	}
	if len(specs) == 0 {
		return nil, errors.New("no job to submit")
	}
	for i := range specs {
		if err := s.validate(&specs[i]); err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
	}
	now := time.Now()
	var out []*Job
	// Batch coalesces concurrent submissions into one commit (one fsync);
	// the function may run again if the batch fails, so it only builds.
	err := s.db.b.Batch(func(tx *boltTx) error {
		cluster, err := s.db.nextCluster(tx)
		if err != nil {
			return err
		}
		out = make([]*Job, len(specs))
		for i, sp := range specs {
			sp.Cluster, sp.Process = cluster, i
			expandCluster(&sp, cluster)
			id := strconv.FormatInt(cluster, 10) + "." + strconv.Itoa(i)
			out[i] = &Job{ID: id, Spec: sp, Owner: owner.Subject, Issuer: owner.Issuer, Auth: who.Method, FQANs: who.FQANs, VO: who.VO, Grid: who.Grid, Rights: who.Rights, State: Idle,
				Reason: "queued", Submitted: now, SandboxDir: filepath.Join(s.cfg.Dir, id), Key: key}
		}
		return putJobs(tx, out...)
	})
	if err != nil {
		return nil, fmt.Errorf("jobs: record submission: %w", err)
	}
	s.mu.Lock()
	for _, j := range out {
		s.jobs[j.ID] = j
	}
	res := copies(out)
	s.mu.Unlock()
	s.poke()
	return res, nil
}

// validate checks what the server must not trust the client about.
func (s *Service) validate(sp *spec.Spec) error {
	if strings.TrimSpace(sp.Executable) == "" {
		return errors.New("executable is missing")
	}
	if sp.CPUs <= 0 {
		sp.CPUs = 1
	}
	if sp.MemoryMB <= 0 {
		sp.MemoryMB = 1024
	}
	if sp.DiskMB < 0 || sp.WallTime < 0 {
		return errors.New("disk and wall time must not be negative")
	}
	if sp.Stdout == "" {
		sp.Stdout = "stdout"
	}
	if sp.Stderr == "" {
		sp.Stderr = "stderr"
	}
	for _, f := range append([]string{sp.Stdout, sp.Stderr}, sp.Outputs...) {
		if msg := spec.SandboxPathProblem(f); msg != "" {
			return fmt.Errorf("output %s", msg)
		}
	}
	for src, dst := range sp.OutputRemaps {
		if _, msg := spec.ParseRemaps(src + " = " + dst); msg != "" {
			return fmt.Errorf("transfer_output_remaps: %s", msg)
		}
	}
	if d := sp.OutputDestination; d != "" {
		if msg := spec.CheckDestination(d); msg != "" {
			return fmt.Errorf("output_destination %s", msg)
		}
	}
	for _, in := range sp.Inputs {
		if msg := spec.SandboxPathProblem(inputName(in)); msg != "" {
			return fmt.Errorf("input %s", msg)
		}
		if in.From != "" && in.Data == nil && in.Ref == "" {
			if msg := spec.CheckSource(in.From); msg != "" {
				return fmt.Errorf("input %s", msg)
			}
		}
		if in.Ref != "" {
			if _, err := os.Stat(s.sharedPath(filepath.Base(in.Ref))); err != nil || filepath.Base(in.Ref) != in.Ref {
				return fmt.Errorf("input %s: shared file %.16s… was not sent with the submission", in.As, in.Ref)
			}
		}
	}
	if len(sp.Domains) == 0 {
		sp.Domains = []string{"local"}
	}
	for _, d := range sp.Domains {
		if !s.KnownDomain(d) {
			return fmt.Errorf("unknown domain %q (known: %s)", d, strings.Join(s.Domains(), ", "))
		}
	}
	if err := s.checkContainer(sp); err != nil {
		return err
	}
	if sp.CPUs > s.cfg.CPUs && len(sp.Domains) == 1 && sp.Domains[0] == "local" {
		return fmt.Errorf("asks for %d CPUs; the local domain has %d", sp.CPUs, s.cfg.CPUs)
	}
	return nil
}

// expandCluster substitutes $(Cluster) now that the cluster is known.
func expandCluster(sp *spec.Spec, cluster int64) {
	c := strconv.FormatInt(cluster, 10)
	r := strings.NewReplacer("$(Cluster)", c, "$(ClusterId)", c, "$(CLUSTER)", c)
	for i, a := range sp.Arguments {
		sp.Arguments[i] = r.Replace(a)
	}
	for k, v := range sp.Env {
		sp.Env[k] = r.Replace(v)
	}
	sp.Executable = r.Replace(sp.Executable)
	for i := range sp.Inputs {
		sp.Inputs[i].From, sp.Inputs[i].As = r.Replace(sp.Inputs[i].From), r.Replace(sp.Inputs[i].As)
	}
	sp.Stdout, sp.Stderr = r.Replace(sp.Stdout), r.Replace(sp.Stderr)
	sp.OutputDestination = r.Replace(sp.OutputDestination)
	if len(sp.OutputRemaps) > 0 {
		m := make(map[string]string, len(sp.OutputRemaps))
		for k, v := range sp.OutputRemaps {
			m[r.Replace(k)] = r.Replace(v)
		}
		sp.OutputRemaps = m
	}
	for i, o := range sp.Outputs {
		sp.Outputs[i] = r.Replace(o)
	}
}
