package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sitebox/internal/jobs/local"
	"slices"
	"sort"
	"strings"
	"time"

	"sitebox/internal/jobs/sched"
)

// failWindow is how many recent results per domain the router weighs,
// none older than failMemory; a domain failing more than half of them
// (with at least failMin results) is skipped. Old failures are forgotten
// so a repaired domain gets jobs again.
const (
	failWindow = 20
	failMin    = 5
	failMemory = 10 * time.Minute
)

// outcome is one job's result in a domain.
type outcome struct {
	failed bool
	at     time.Time
}

func (s *Service) noteOutcome(domain string, failed bool) {
	o := append(s.outcome[domain], outcome{failed, time.Now()})
	if len(o) > failWindow {
		o = o[len(o)-failWindow:]
	}
	s.outcome[domain] = o
}

func (s *Service) failureRate(domain string) (failed, of int) {
	cutoff := time.Now().Add(-failMemory)
	for _, o := range s.outcome[domain] {
		if o.at.Before(cutoff) {
			continue
		}
		of++
		if o.failed {
			failed++
		}
	}
	return failed, of
}

// domainLoad counts the router's jobs in a domain: all, and those not yet
// running there.
func (s *Service) domainLoad(name string) (held, idle int) {
	for id, d := range s.remote {
		if d.Name != name {
			continue
		}
		held++
		if j := s.jobs[id]; j != nil && j.State != Running {
			idle++
		}
	}
	return held, idle
}

// routeLocked sends idle jobs the local round did not start to another of
// their domains with room, and records why the others wait.
func (s *Service) routeLocked(ctx context.Context, localWhy map[string]string) {
	// Only jobs that may leave the box are routed, in queue order; the
	// others just learn why the local round left them waiting.
	var idle []*Job
	for _, j := range s.jobs {
		if j.State != Idle {
			continue
		}
		if len(j.Spec.Domains) == 1 && j.Spec.Domains[0] == "local" {
			s.setWaiting(j, localWhy[j.ID], "local")
			continue
		}
		idle = append(idle, j)
	}
	prio := map[string]float64{}
	for _, j := range idle {
		prio[ownerKey(j)] = s.usage[ownerKey(j)].decayed(time.Now(), s.cfg.HalfLife) / s.share(j)
	}
	order := make(map[*Job]*sched.Job, len(idle))
	for _, j := range idle {
		order[j] = schedJob(j)
	}
	sort.SliceStable(idle, func(a, b int) bool { return sched.Before(order[idle[a]], order[idle[b]], prio) })
	for _, j := range idle {
		var why []string
		routed := false
		for _, name := range j.Spec.Domains {
			if name == "local" {
				if w := localWhy[j.ID]; w != "" {
					why = append(why, "local: "+w)
				}
				continue
			}
			d := s.domains[name]
			held, waiting := s.domainLoad(name)
			failed, of := s.failureRate(name)
			switch {
			case d.MaxJobs > 0 && held >= d.MaxJobs:
				why = append(why, fmt.Sprintf("%s: holds %d jobs, its max_jobs", name, held))
			case d.MaxIdleJobs > 0 && waiting >= d.MaxIdleJobs:
				why = append(why, fmt.Sprintf("%s: %d jobs already wait there, its max_idle_jobs", name, waiting))
			case of >= failMin && failed*2 > of:
				why = append(why, fmt.Sprintf("%s: %d of its last %d jobs failed", name, failed, of))
			default:
				s.routeTo(ctx, j, d)
				routed = true
			}
			if routed {
				break
			}
		}
		if !routed {
			s.setWaiting(j, strings.Join(why, "; "), "")
		}
	}
}

// setWaiting records why j waits ("" for want of a reason: a free slot).
func (s *Service) setWaiting(j *Job, why, domain string) {
	reason := "waiting for a free slot"
	if why != "" {
		reason = "waiting: " + why
		if domain != "" {
			reason = "waiting: " + domain + ": " + why
		}
	}
	if j.Reason != reason {
		j.Reason = reason
		s.dirty[j.ID] = true
	}
}

// routeTo stages j and submits it to d. The submission is written
// ahead (Submitting) and its id recorded before anything else, so a box
// that stops in between asks d rather than submitting twice.
func (s *Service) routeTo(ctx context.Context, j *Job, d *Domain) {
	j.State, j.Domain, j.Reason, j.Submitting = Staging, d.Name, "staging for "+d.Name, false
	j.Attempts++
	s.remote[j.ID] = d
	s.dirty[j.ID] = true
	sctx, cancel := context.WithCancel(ctx)
	s.staging[j.ID] = cancel
	spec, dir, as := j.Spec, j.SandboxDir, j.StageOwner()
	_, selfStaging := d.Backend.(interface{ StagesItself() })
	go func() {
		var err error
		if !selfStaging {
			err = s.stage(sctx, as, spec, dir)
		} else {
			err = os.MkdirAll(dir, 0o755)
		}
		s.mu.Lock()
		if err == nil && j.State == Staging {
			j.Submitting, j.Reason = true, "submitting to "+d.Name
			if cerr := s.commitLocked(j); cerr != nil {
				err = fmt.Errorf("cannot record the submission: %w", cerr)
				j.Submitting = false
			}
		}
		snapshot := *j
		s.mu.Unlock()
		if err == nil && selfStaging {
			snapshot.Spec, err = s.withSharedData(snapshot.Spec)
		}
		var remote string
		unsure := false
		if err == nil && snapshot.State == Staging {
			remote, err = d.Backend.Submit(sctx, &snapshot)
			if err != nil && snapshot.Submitting {
				remote, unsure, err = confirmFailure(ctx, d, &snapshot, err)
			}
		}
		cancel()
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.staging, j.ID)
		if j.State != Staging {
			if remote != "" { // cancelled while submitting
				j.Remote, j.Remotes = remote, append(j.Remotes, remote)
				s.dirty[j.ID] = true
				snapshot.Remote = remote
				// Unbound: the job must not be left running in its
				// domain because the box is stopping.
				go d.Backend.Cancel(context.Background(), &snapshot)
			}
			return
		}
		if unsure {
			j.Reason = fmt.Sprintf("submitting to %s failed (%v), and it cannot say yet whether it got the job; asking again", d.Name, err)
			s.dirty[j.ID] = true
			s.unsure[j.ID] = d
			return
		}
		if err != nil {
			delete(s.remote, j.ID)
			s.noteOutcome(d.Name, true)
			s.requeue(j, fmt.Sprintf("%s refused it: %v", d.Name, err))
			return
		}
		s.routed(j, d, remote)
	}()
}

// confirmFailure asks d, when it can say (finder), whether a submission
// that failed reached it after all — an answer lost to a timeout or a cut
// connection must not make the job run twice. It returns the job's id
// there (the failure was not one), or the failure, or unsure when d could
// not answer.
func confirmFailure(ctx context.Context, d *Domain, j *Job, failure error) (string, bool, error) {
	f, ok := d.Backend.(finder)
	if !ok {
		return "", false, failure
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	remote, err := f.Find(fctx, j)
	switch {
	case err != nil:
		return "", true, failure
	case remote != "":
		return remote, false, nil
	}
	return "", false, failure
}

// routed records that d has j as remote, on disk at once.
func (s *Service) routed(j *Job, d *Domain, remote string) {
	j.State, j.Remote, j.Reason, j.Submitting = Routed, remote, "submitted to "+d.Name+" as "+remote, false
	if !slices.Contains(j.Remotes, remote) {
		j.Remotes = append(j.Remotes, remote)
	}
	if err := s.commitLocked(j); err != nil {
		s.log.Error("cannot record a job's submission", "job", j.ID, "domain", d.Name, "remote", remote, "err", err)
	}
}

// ErrNotOwner is returned when a user acts on another's job.
var ErrNotOwner = errors.New("not the job's owner")

// ErrNoJob is returned for an unknown job id.
var ErrNoJob = errors.New("no such job")

// Cancel stops job id for who (its owner: issuer and subject).
func (s *Service) Cancel(ctx context.Context, id string, who Principal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if j == nil {
		return fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	if j.Principal() != who {
		return fmt.Errorf("%w: job %s is not %s's", ErrNotOwner, id, who)
	}
	if j.State.Final() {
		return fmt.Errorf("job %s has already ended (%s)", id, j.State)
	}
	why := "cancelled by " + who.Subject
	switch {
	case j.State == Idle:
		s.end(j, Cancelled, why)
	case j.Domain == "local":
		lr := s.local[id]
		if cancel := s.staging[id]; cancel != nil {
			cancel()
		}
		s.end(j, Cancelled, why)
		if lr != nil && lr.run != nil && !lr.stopping {
			lr.stopping = true
			s.exec.Stop(lr.run, s.cfg.PreemptGrace)
		} else if lr != nil && lr.run == nil {
			delete(s.local, id)
		}
	default:
		if cancel := s.staging[id]; cancel != nil {
			cancel()
		}
		d := s.remote[id]
		delete(s.remote, id)
		s.end(j, Cancelled, why)
		if d != nil && j.Remote != "" {
			snap := *j
			// Unbound by the caller's ctx: the request that cancels
			// ends before the domain has answered.
			go func() {
				if err := d.Backend.Cancel(context.Background(), &snap); err != nil {
					s.log.Warn("cannot cancel job in its domain", "job", id, "domain", d.Name, "err", err)
				} else if r, ok := d.Backend.(sandboxReleaser); ok {
					if err := r.Release(&snap); err != nil {
						s.log.Warn("cannot take the job's sandbox back", "job", id, "domain", d.Name, "err", err)
					}
				}
			}()
		}
	}
	return nil
}

// Logs opens a job's stdout or stderr (stream "stdout" or "stderr").
func (s *Service) Logs(id, stream string) (io.ReadCloser, error) {
	j, ok := s.Get(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoJob, id)
	}
	name := j.Spec.Stdout
	if stream == "stderr" {
		name = j.Spec.Stderr
	}
	f, err := local.OpenInSandbox(j.SandboxDir, name, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return io.NopCloser(strings.NewReader("")), nil // nothing written (yet)
	}
	return f, err
}
