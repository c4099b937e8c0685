package jobs

import (
	"fmt"
	"time"

	"sitebox/internal/jobs/local"
)

// slotNamed returns the configured slot called name.
func (s *Service) slotNamed(name string) (local.Slot, bool) {
	for _, sl := range s.cfg.Slots {
		if sl.Name == name {
			return sl, true
		}
	}
	return local.Slot{}, false
}

// freeSlotLocked returns a slot no local job holds and none is held back.
func (s *Service) freeSlotLocked() (local.Slot, bool) {
	used := map[string]bool{}
	for id := range s.local {
		if j := s.jobs[id]; j != nil {
			used[j.Slot] = true
		}
	}
	for _, sl := range s.cfg.Slots {
		if !used[sl.Name] && s.held[sl.Name] == nil {
			return sl, true
		}
	}
	return local.Slot{}, false
}

// noSlotWhyLocked says why freeSlotLocked found no slot.
func (s *Service) noSlotWhyLocked() string {
	if len(s.held) == 0 {
		return fmt.Sprintf("all %d slot users run jobs", len(s.cfg.Slots))
	}
	return fmt.Sprintf("%d of the %d slot users held back until the cleanup after their last job succeeds (the box log says why), the others run jobs",
		len(s.held), len(s.cfg.Slots))
}

// A slot whose cleanup after a job failed (processes that survive, files
// the sweep could not remove or search to the end, a sandbox not taken
// back) still holds what that job left, for the next job of any owner to
// find: it is held back, given to no job, and cleaned up again every
// ReleaseRetry until that succeeds. So are the slots no job holds when
// the box starts: what became of the cleanup after their last job, in an
// earlier run of the box, is not known.
type heldSlot struct {
	sandbox string    // the last job's, taken back with each retry ("": none)
	why     string    // the last failure; logged once, when first held
	tried   time.Time // when the last attempt ended
	trying  bool
}

// holdSlotLocked holds slot name back after its release (for the job
// with sandbox) failed with why.
func (s *Service) holdSlotLocked(name, sandbox, jobID string, why error) {
	if h := s.held[name]; h != nil {
		h.why, h.tried = why.Error(), time.Now()
		return
	}
	s.held[name] = &heldSlot{sandbox: sandbox, why: why.Error(), tried: time.Now()}
	s.log.Error("slot user held back: the cleanup after its job failed; no job gets it until a retry succeeds",
		"slot", name, "job", jobID, "retry_every", s.cfg.ReleaseRetry, "err", why)
}

// holdIdleSlots holds back, for a first cleanup, the slots no recovered
// job runs in.
func (s *Service) holdIdleSlots() {
	used := map[string]bool{}
	for id := range s.local {
		used[s.jobs[id].Slot] = true
	}
	for _, sl := range s.cfg.Slots {
		if !used[sl.Name] && s.held[sl.Name] == nil {
			s.held[sl.Name] = &heldSlot{}
		}
	}
}

// retryHeldLocked starts the cleanup of each held slot that is due,
// outside the lock (a sweep may take seconds); success frees the slot.
func (s *Service) retryHeldLocked(now time.Time) {
	for name, h := range s.held {
		sl, ok := s.slotNamed(name)
		if !ok || h.trying || now.Sub(h.tried) < s.cfg.ReleaseRetry {
			continue
		}
		h.trying = true
		s.retrying.Add(1)
		go func() {
			defer s.retrying.Done()
			err := s.exec.Release(h.sandbox, sl)
			s.mu.Lock()
			defer s.mu.Unlock()
			h.trying, h.tried = false, time.Now()
			switch {
			case err == nil:
				delete(s.held, name)
				if h.why != "" {
					s.log.Info("slot user cleaned up; back in use", "slot", name)
				}
				s.poke()
			case h.why == "": // held when the box started: not logged yet
				h.why = err.Error()
				s.log.Error("slot user held back: its cleanup failed; no job gets it until a retry succeeds",
					"slot", name, "retry_every", s.cfg.ReleaseRetry, "err", err)
			default:
				h.why = err.Error()
			}
		}()
	}
}
