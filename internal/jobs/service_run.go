package jobs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"sitebox/internal/jobs/sched"
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
			s.retrying.Wait() // no cleanup outlives the service
			return nil
		case <-t.C:
		case <-s.kick:
		}
		now := time.Now()
		s.mu.Lock()
		s.accrueLocked(now)
		s.retryHeldLocked(now)
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
			// Stays Idle, first in line next round; routing records why.
			out.Waiting[j.ID] = s.noSlotWhyLocked()
			continue
		}
		s.startLocal(ctx, j, slot) // no longer Idle: not routed
	}
	s.routeLocked(ctx, out.Waiting)
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
	s.log.Info("job ended", "job", j.ID, "owner", j.Owner, "issuer", j.Issuer, "auth", j.authMethod(), "state", st, "domain", j.Domain, "why", why)
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
