package jobs

import (
	"context"
	"fmt"
	"os"
	"sitebox/internal/jobs/local"
	"slices"
	"time"

	"sitebox/internal/jobs/sched"
	"sitebox/internal/jobs/spec"
)

// Run schedules until ctx ends: each tick (and after every event) the
// local domain's round, routing to other domains, and from time to time
// a poll of those domains.
func (s *Service) Run(ctx context.Context) error {
	s.mu.Lock()
	for id, lr := range s.local {
		if lr.run != nil && lr.run.Adopted {
			go s.exec.AwaitGone(ctx, lr.run)
			go s.watchLocal(ctx, id, lr.run)
		}
	}
	s.mu.Unlock()
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	lastPoll, lastUsage := time.Time{}, time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.kick:
		}
		now := time.Now()
		s.mu.Lock()
		s.accrueLocked(now)
		s.scheduleLocked(ctx, now)
		if now.Sub(lastUsage) > 30*time.Second {
			s.saveUsageLocked(now)
			s.sweepLocked(now)
			s.sweepSharedLocked(now)
			lastUsage = now
		}
		if err := s.flushLocked(); err != nil {
			s.log.Error("cannot save job records", "err", err)
		}
		s.mu.Unlock()
		if now.Sub(lastPoll) >= s.cfg.PollEvery {
			s.pollDomains(ctx)
			lastPoll = now
		}
	}
}

// accrueLocked charges running local jobs' CPUs to their owners' usage.
func (s *Service) accrueLocked(now time.Time) {
	if s.lastRun.IsZero() {
		s.lastRun = now
		return
	}
	dt := now.Sub(s.lastRun).Seconds()
	s.lastRun = now
	for id, lr := range s.local {
		j := s.jobs[id]
		if lr.run == nil || j == nil {
			continue
		}
		s.addUsage(ownerKey(j), float64(j.Spec.CPUs)*dt, now)
	}
}

func (s *Service) addUsage(owner string, cpuSeconds float64, now time.Time) {
	u := s.usage[owner]
	s.usage[owner] = usage{Value: u.decayed(now, s.cfg.HalfLife) + cpuSeconds, At: now}
}

func (s *Service) saveUsageLocked(now time.Time) {
	m := make(map[string]usage, len(s.usage))
	for k, u := range s.usage {
		m[k] = usage{Value: u.decayed(now, s.cfg.HalfLife), At: now}
	}
	if err := s.db.saveUsage(m); err != nil {
		s.log.Warn("cannot save fair-share usage", "err", err)
	}
}

// share is the owner's weight: by subject for local users (a subject in
// the shares names a site user, never a grid user of another issuer who
// happens to carry the same subject), else by VO, else 1.
func (s *Service) share(j *Job) float64 {
	if w, ok := s.cfg.Shares[j.Owner]; ok && w > 0 && !j.Grid {
		return w
	}
	if w, ok := s.cfg.Shares["vo:"+j.VO]; ok && w > 0 {
		return w
	}
	return 1
}

// schedJob is what the local scheduler knows of j.
func schedJob(j *Job) *sched.Job {
	return &sched.Job{ID: j.ID, Owner: ownerKey(j), CPUs: j.Spec.CPUs, MemoryMB: j.Spec.MemoryMB, WallTime: j.Spec.WallTime,
		Backfill: j.Spec.Backfill, Grid: j.Grid, Submitted: j.Submitted, Started: j.Started}
}

// scheduleLocked runs the local round and routes what is left.
func (s *Service) scheduleLocked(ctx context.Context, now time.Time) {
	var running []sched.Running
	for id, lr := range s.local {
		running = append(running, sched.Running{Job: schedJob(s.jobs[id]), Stopping: lr.stopping})
	}
	var idle []*sched.Job
	firstJob := map[string]*Job{}
	for _, j := range s.jobs {
		if j.State == Idle && slices.Contains(j.Spec.Domains, "local") {
			idle = append(idle, schedJob(j))
			firstJob[ownerKey(j)] = j
		}
	}
	out := sched.Schedule(sched.Input{
		CPUs: s.cfg.CPUs, MemoryMB: s.cfg.MemoryMB, GridMaxCPUs: s.cfg.GridMaxCPUs,
		Running: running, Idle: idle,
		Priority: func(owner string) float64 {
			return s.usage[owner].decayed(now, s.cfg.HalfLife) / s.share(firstJob[owner])
		},
		Projected: func(sj *sched.Job) float64 {
			est := sj.WallTime.Seconds()
			if est <= 0 {
				est = 60
			}
			return float64(sj.CPUs) * est / s.share(s.jobs[sj.ID])
		},
	})
	for _, sj := range out.Preempt {
		s.preemptLocked(s.jobs[sj.ID])
	}
	for _, sj := range out.Start {
		j := s.jobs[sj.ID]
		slot, ok := s.freeSlotLocked()
		if !ok {
			// Stays Idle, first in line next round.
			j.Reason = fmt.Sprintf("waiting for a free slot user (all %d run jobs)", len(s.cfg.Slots))
			s.dirty[j.ID] = true
			continue
		}
		s.startLocal(ctx, j, slot) // no longer Idle: not routed
	}
	s.routeLocked(ctx, out.Waiting)
}

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
	spec := j.Spec
	dir := j.SandboxDir
	go func() {
		err := s.stage(sctx, spec, dir)
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

// stage makes the sandbox and fetches the inputs into it.
func (s *Service) stage(ctx context.Context, sp spec.Spec, dir string) error {
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
		if err := s.cfg.Stager.Fetch(ctx, in, dst); err != nil {
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
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return
	}
	s.releaseLocked(j)
	rep, err := s.exec.Finish(j.ID, j.SandboxDir)
	s.finishLocal(j, rep, err)
}

// releaseLocked ends what the job's slot user still runs and takes its
// sandbox back, before the slot goes to another job.
func (s *Service) releaseLocked(j *Job) {
	if j.Slot == "" {
		return // recorded before jobs had slot users
	}
	sl, ok := s.slotNamed(j.Slot)
	if !ok {
		s.log.Warn("the job's slot user is no longer configured; its processes are not reaped", "job", j.ID, "slot", j.Slot)
		return
	}
	if err := s.exec.Release(j.SandboxDir, sl); err != nil {
		s.log.Error("cannot release the job's slot user", "job", j.ID, "slot", j.Slot, "err", err)
	}
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

// retryLocked requeues a failed job that has retries left (max_retries).
func (s *Service) retryLocked(j *Job, why string) bool {
	if j.Retries >= j.Spec.MaxRetries {
		return false
	}
	j.Retries++
	s.requeue(j, fmt.Sprintf("%s; retry %d of %d", why, j.Retries, j.Spec.MaxRetries))
	return true
}

// requeue puts a job back in the queue, on disk before anything else
// happens to it.
func (s *Service) requeue(j *Job, why string) {
	j.State, j.Reason, j.Domain, j.Remote, j.Submitting = Idle, why, "", "", false
	j.Pid, j.PidStart = 0, 0
	if err := s.commitLocked(j); err != nil {
		s.log.Error("cannot record a requeued job", "job", j.ID, "err", err)
	}
}

// commitLocked writes j (and every other changed job) now: the
// transitions whose loss a crash would turn into a lost or doubled job
// are on disk before their effect.
func (s *Service) commitLocked(j *Job) error {
	s.dirty[j.ID] = true
	return s.flushLocked()
}

// end records a final state.
func (s *Service) end(j *Job, st State, why string) {
	j.State, j.Reason, j.Finished = st, why, time.Now()
	if j.Started.IsZero() && st != Cancelled {
		j.Started = j.Finished
	}
	s.dirty[j.ID] = true
	if d := j.Domain; d != "" && d != "local" {
		s.noteOutcome(d, st == Failed || st == Lost)
	}
	s.log.Info("job ended", "job", j.ID, "owner", j.Owner, "issuer", j.Issuer, "state", st, "domain", j.Domain, "why", why)
	if err := s.commitLocked(j); err != nil {
		s.log.Error("cannot record a job's end", "job", j.ID, "err", err)
	}
	s.poke()
}

// flush saves the changed jobs in one transaction.
func (s *Service) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

func (s *Service) flushLocked() error {
	if len(s.dirty) == 0 {
		return nil
	}
	js := make([]*Job, 0, len(s.dirty))
	for id := range s.dirty {
		if j := s.jobs[id]; j != nil {
			js = append(js, j)
		}
	}
	if err := s.db.save(js...); err != nil {
		return err
	}
	clear(s.dirty)
	return nil
}
