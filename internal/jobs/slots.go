package jobs

import "sitebox/internal/jobs/local"

// slotNamed returns the configured slot called name.
func (s *Service) slotNamed(name string) (local.Slot, bool) {
	for _, sl := range s.cfg.Slots {
		if sl.Name == name {
			return sl, true
		}
	}
	return local.Slot{}, false
}

// freeSlotLocked returns a slot no local job holds.
func (s *Service) freeSlotLocked() (local.Slot, bool) {
	used := map[string]bool{}
	for id := range s.local {
		if j := s.jobs[id]; j != nil {
			used[j.Slot] = true
		}
	}
	for _, sl := range s.cfg.Slots {
		if !used[sl.Name] {
			return sl, true
		}
	}
	return local.Slot{}, false
}
