package jobs

import (
	"context"
	"time"
)

// pollDomains asks every domain about its jobs and applies the answers.
func (s *Service) pollDomains(ctx context.Context) {
	s.askUnsure(ctx)
	s.mu.Lock()
	byDomain := map[*Domain][]*Job{}
	for id, d := range s.remote {
		if j := s.jobs[id]; j != nil && (j.State == Routed || j.State == Running) {
			c := *j
			byDomain[d] = append(byDomain[d], &c)
		}
	}
	s.mu.Unlock()
	for d, js := range byDomain {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ups, err := d.Backend.Poll(pctx, js)
		cancel()
		if err != nil {
			// The jobs it could poll still count.
			s.log.Warn("cannot poll domain", "domain", d.Name, "err", err)
		}
		s.mu.Lock()
		for _, u := range ups {
			s.applyUpdate(u)
		}
		s.mu.Unlock()
	}
}

// askUnsure asks the domains again about the submissions they could not
// account for at the start. A job cancelled meanwhile that the domain
// has after all is cancelled there.
func (s *Service) askUnsure(ctx context.Context) {
	s.mu.Lock()
	type ask struct {
		j *Job
		d *Domain
	}
	var asks []ask
	for id, d := range s.unsure {
		if j := s.jobs[id]; j != nil {
			c := *j
			asks = append(asks, ask{&c, d})
		}
	}
	s.mu.Unlock()
	for _, a := range asks {
		f, _ := a.d.Backend.(finder)
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		remote, err := f.Find(fctx, a.j)
		cancel()
		s.mu.Lock()
		j := s.jobs[a.j.ID]
		switch {
		case j == nil:
		case j.State.Final():
			delete(s.unsure, j.ID)
			if err == nil && remote != "" {
				snap := *j
				snap.Remote = remote
				go a.d.Backend.Cancel(context.Background(), &snap)
			}
		default:
			s.settleSubmission(j, a.d, remote, err)
		}
		s.mu.Unlock()
	}
}

func (s *Service) applyUpdate(u Update) {
	j := s.jobs[u.ID]
	if j == nil || j.State.Final() || j.State == Staging {
		return
	}
	if u.CPUTime > 0 {
		j.CPUTime = u.CPUTime
	}
	if u.WallTime > 0 {
		j.WallTime = u.WallTime
	}
	if !u.Started.IsZero() {
		j.Started = u.Started
	}
	j.ExitCode = u.ExitCode
	if !u.State.Final() {
		if j.State != u.State || j.Reason != u.Reason && u.Reason != "" {
			j.State = u.State
			if u.Reason != "" {
				j.Reason = j.Domain + ": " + u.Reason
			}
			s.dirty[j.ID] = true
		}
		return
	}
	if d := s.remote[j.ID]; d != nil {
		if r, ok := d.Backend.(sandboxReleaser); ok {
			if err := r.Release(j); err != nil {
				s.log.Warn("cannot take the job's sandbox back", "job", j.ID, "domain", j.Domain, "err", err)
			}
		}
	}
	if u.CPUUnknown && j.CPUTime == 0 {
		j.CPUUnknown = true
	}
	delete(s.remote, j.ID)
	if !u.Finished.IsZero() {
		defer func() { j.Finished = u.Finished }()
	}
	if u.State == Completed {
		s.deliverAsync(j)
		return
	}
	if u.State == Failed && s.retryLocked(j, j.Domain+": "+u.Reason) {
		return
	}
	s.end(j, u.State, j.Domain+": "+u.Reason)
}
