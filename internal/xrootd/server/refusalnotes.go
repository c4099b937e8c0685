package server

import "time"

// refusalBurst is how long repeated refusals of one kind for one client
// are logged once.
const refusalBurst = time.Minute

// maxRefusalNotes bounds the memory of the once-per-burst log when
// refusals come from very many addresses.
const maxRefusalNotes = 4096

// refusalNotes remembers when each kind of refusal was last logged. Not
// safe for concurrent use (the limiter's lock guards it).
type refusalNotes struct {
	m map[string]*refusalNote
}

type refusalNote struct {
	logged     time.Time
	suppressed int
}

// note records one refusal under key and reports whether to log it, with
// the number of refusals left unlogged since the last time.
func (r *refusalNotes) note(key string, now time.Time) (int, bool) {
	if r.m == nil {
		r.m = map[string]*refusalNote{}
	}
	n := r.m[key]
	if n != nil && now.Sub(n.logged) < refusalBurst {
		n.suppressed++
		return 0, false
	}
	if n == nil && len(r.m) >= maxRefusalNotes {
		for k, v := range r.m {
			if now.Sub(v.logged) >= refusalBurst {
				delete(r.m, k)
			}
		}
		if len(r.m) >= maxRefusalNotes {
			return 0, false // a flood from many addresses: the first ones were logged
		}
	}
	if n == nil {
		n = &refusalNote{}
		r.m[key] = n
	}
	s := n.suppressed
	n.logged, n.suppressed = now, 0
	return s, true
}
