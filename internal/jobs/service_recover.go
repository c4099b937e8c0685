package jobs

import (
	"context"
	"fmt"
	"time"

	"sitebox/internal/jobs/local"
)

// After a crash the records say what may have happened (write-ahead);
// these find out what did.

// recoverLocal finds a local job that was running when the box stopped:
// its supervisor (by the recorded pid, else by its command line, for a
// box that died before recording it), else its exit report. A job whose
// start was written ahead but never confirmed, with neither, never ran:
// it goes back to the queue.
func (s *Service) recoverLocal(j *Job) {
	r := s.exec.Reattach(j.Pid, j.PidStart)
	if r == nil {
		r = s.exec.FindSupervisor(j.SandboxDir)
	}
	if r != nil {
		j.Pid, j.PidStart = r.PID, r.Started
		s.dirty[j.ID] = true
		s.local[j.ID] = &localRun{run: r} // watched from Run
		s.log.Info("re-attached to a running job", "job", j.ID, "pid", j.Pid)
		return
	}
	rep, err := local.ReadExit(j.SandboxDir)
	if err == nil && (rep.Attempt == j.Attempts || rep.Attempt == 0 && j.Pid != 0) {
		s.local[j.ID] = &localRun{}
		s.releaseLocked(j)
		s.finishLocal(j, rep, nil)
		return
	}
	s.releaseLocked(j)
	if j.Pid == 0 {
		s.requeue(j, "the box stopped while starting it (it never ran); requeued")
		return
	}
	s.end(j, Lost, "its process was gone when the box restarted, with no exit report")
}

// recoverSubmission settles a job the box was submitting to another
// domain when it stopped: the domain is asked whether it has the job,
// which is then followed there, or requeued when it has not. A domain
// that cannot say leaves the job lost, never submitted twice.
func (s *Service) recoverSubmission(j *Job) {
	d := s.domains[j.Domain]
	if d == nil {
		s.end(j, Lost, fmt.Sprintf("domain %q is no longer configured", j.Domain))
		return
	}
	f, ok := d.Backend.(finder)
	if !ok {
		s.end(j, Lost, fmt.Sprintf("the box stopped while submitting it to %s, which cannot say whether it got it", d.Name))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	remote, err := f.Find(ctx, j)
	cancel()
	s.settleSubmission(j, d, remote, err)
}

// settleSubmission applies what d said about an unsure submission of j.
func (s *Service) settleSubmission(j *Job, d *Domain, remote string, err error) {
	switch {
	case err != nil:
		// Never guessed: asked again at the next poll.
		j.Reason = fmt.Sprintf("the box stopped while submitting it to %s, which cannot say yet whether it got it (%v); asking again", d.Name, err)
		s.dirty[j.ID] = true
		s.unsure[j.ID] = d
		return
	case remote == "":
		s.requeue(j, fmt.Sprintf("the box stopped while submitting it to %s, which never got it; requeued", d.Name))
	default:
		s.remote[j.ID] = d
		s.routed(j, d, remote)
	}
	delete(s.unsure, j.ID)
}
