package jobs

import (
	"context"
	"fmt"
	"os"
	"sitebox/internal/jobs/local"
	"time"

	"sitebox/internal/jobs/spec"
)

// startLocal reserves the job's slot and stages it; the supervisor starts
// when its inputs are in the sandbox.
func (s *Service) startLocal(ctx context.Context, j *Job, slot local.Slot) {
	j.State, j.Domain, j.Reason = Staging, "local", "fetching inputs"
	j.Slot = slot.Name
	j.Attempts++
	s.local[j.ID] = &localRun{}
	s.dirty[j.ID] = true
	sctx, cancel := context.WithCancel(ctx)
	s.staging[j.ID] = cancel
	spec, dir, as := j.Spec, j.SandboxDir, j.StageOwner()
	go func() {
		err := s.stage(sctx, as, spec, dir)
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.staging, j.ID)
		cancel()
		if j.State != Staging { // cancelled meanwhile
			delete(s.local, j.ID)
			s.poke()
			return
		}
		if err != nil {
			delete(s.local, j.ID)
			s.end(j, Failed, "staging: "+err.Error())
			return
		}
		// Write-ahead: the record says the job may run before its
		// supervisor exists, so a box that dies in between looks for the
		// supervisor (FindSupervisor) rather than starting it again.
		j.State, j.Reason, j.Started = Running, "starting on the box", time.Now()
		j.Pid, j.PidStart = 0, 0
		if err := s.commitLocked(j); err != nil {
			delete(s.local, j.ID)
			s.requeue(j, "cannot record the job's start: "+err.Error())
			return
		}
		r, err := s.exec.Start(j.ID, j.SandboxDir, j.Spec, slot, j.Attempts)
		if err != nil {
			s.releaseLocked(j) // the sandbox may already be the slot's
			delete(s.local, j.ID)
			s.end(j, Failed, err.Error())
			return
		}
		s.local[j.ID].run = r
		j.Reason = "running on the box"
		j.Pid, j.PidStart = r.PID, r.Started
		if err := s.commitLocked(j); err != nil {
			s.log.Error("cannot record the job's supervisor; a restart finds it by its command line", "job", j.ID, "err", err)
		}
		go s.watchLocal(ctx, j.ID, r)
	}()
}

// stage makes the sandbox and fetches the inputs into it as their owner.
func (s *Service) stage(ctx context.Context, as StageOwner, sp spec.Spec, dir string) error {
	// The box's alone until the job starts (claimSandbox). A requeued
	// job starts afresh: what an earlier attempt left (links included)
	// is never written through.
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, in := range sp.Inputs {
		name := inputName(in)
		dst := dir + "/" + name
		if in.Ref != "" {
			if err := s.copyShared(in.Ref, dst); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		if in.Data != nil {
			if err := os.WriteFile(dst, in.Data, 0o755); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			continue
		}
		if s.cfg.Stager == nil {
			return fmt.Errorf("input %s: no stager configured to fetch it", in.From)
		}
		if err := s.cfg.Stager.Fetch(ctx, as, in, dst); err != nil {
			return fmt.Errorf("input %s: %w", in.From, err)
		}
	}
	return nil
}

// watchLocal waits for a local job's supervisor to end. When ctx ends
// first (the box stops) the job runs on: the next start re-attaches it.
func (s *Service) watchLocal(ctx context.Context, id string, r *local.Running) {
	select {
	case <-r.Done:
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	j := s.jobs[id]
	if j == nil {
		s.mu.Unlock()
		return
	}
	slot, sandbox := j.Slot, j.SandboxDir
	s.mu.Unlock()
	// The cleanup may take seconds (a job that left many files): not
	// under the lock, which would stall every other job and the API. The
	// job still holds its slot meanwhile (s.local), so no job gets it.
	s.release(j.ID, slot, sandbox)
	s.mu.Lock()
	defer s.mu.Unlock()
	rep, err := s.exec.Finish(j.ID, j.SandboxDir)
	s.finishLocal(j, rep, err)
}

// releaseLocked ends what the job's slot user still runs, removes what
// it left in the shared places and takes its sandbox back, before the
// slot goes to another job; a slot whose release failed is held back.
func (s *Service) releaseLocked(j *Job) {
	if err := s.releaseErr(j.ID, j.Slot, j.SandboxDir); err != nil {
		s.holdSlotLocked(j.Slot, j.SandboxDir, j.ID, err)
	}
}

// release is releaseLocked for a caller that does not hold the lock.
func (s *Service) release(id, slot, sandbox string) {
	if err := s.releaseErr(id, slot, sandbox); err != nil {
		s.mu.Lock()
		s.holdSlotLocked(slot, sandbox, id, err)
		s.mu.Unlock()
	}
}

// releaseErr releases the slot user of job id, whose sandbox it was.
func (s *Service) releaseErr(id, slot, sandbox string) error {
	if slot == "" {
		return nil // recorded before jobs had slot users
	}
	sl, ok := s.slotNamed(slot)
	if !ok {
		s.log.Warn("the job's slot user is no longer configured; its processes are not reaped", "job", id, "slot", slot)
		return nil
	}
	return s.exec.Release(sandbox, sl)
}

// finishLocal records a local job's end: requeued after a preemption,
// cancelled, or completed/failed with its accounting; outputs are
// delivered before a success counts.
func (s *Service) finishLocal(j *Job, rep *local.ExitReport, err error) {
	lr := s.local[j.ID]
	delete(s.local, j.ID)
	if rep != nil {
		j.CPUTime += rep.CPU
		j.WallTime += rep.Wall
		j.ExitCode = rep.ExitCode
	}
	j.Pid, j.PidStart = 0, 0
	switch {
	case j.State == Cancelled:
		j.Finished = time.Now()
		s.dirty[j.ID] = true
	case lr != nil && lr.requeue:
		j.Preempted++
		s.requeue(j, fmt.Sprintf("preempted by a higher-priority job (%d time(s)); requeued", j.Preempted))
	case err != nil:
		s.end(j, Failed, err.Error())
	case rep.ExitCode != 0:
		why := fmt.Sprintf("exited with code %d", rep.ExitCode)
		if rep.Signal != "" {
			why = "killed by " + rep.Signal
		}
		if rep.Reason != "" {
			why += ": " + rep.Reason
		}
		if !s.retryLocked(j, why) {
			s.end(j, Failed, why)
		}
	default:
		s.deliverAsync(j)
		return
	}
	s.poke()
}

// preemptLocked stops a backfill job to free its slot; it goes back to
// the queue once stopped.
func (s *Service) preemptLocked(j *Job) {
	lr := s.local[j.ID]
	if lr == nil || lr.stopping {
		return
	}
	lr.stopping, lr.requeue = true, true
	j.Reason = fmt.Sprintf("being preempted (SIGTERM, SIGKILL after %v)", s.cfg.PreemptGrace)
	s.dirty[j.ID] = true
	s.log.Info("preempting backfill job", "job", j.ID, "owner", j.Owner, "issuer", j.Issuer)
	if lr.run != nil {
		s.exec.Stop(lr.run, s.cfg.PreemptGrace)
	} else if cancel := s.staging[j.ID]; cancel != nil {
		cancel()
		delete(s.local, j.ID)
		s.requeue(j, "preempted while staging; requeued")
	}
}
