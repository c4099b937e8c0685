package director

import (
	"slices"
	"strings"
	"time"
)

// The registry's epoch counts the changes that can make a server
// eligible for a path where it was not: a server joining or changing its
// prefixes, role or endpoint, one found down answering again, one back
// from silence, a planned downtime ending. A search's answers taken at
// an epoch cover every server eligible then; while the epoch stands, the
// servers eligible now are among those (fewer, if some went down or
// silent), so a located path is routed from its holders alone, without
// visiting every server that exports it. Whatever makes a server
// ineligible needs no new epoch: each holder is checked as it is used.

// bump starts a new epoch; r.mu held.
func (r *registry) bump() { r.epoch.Add(1) }

// epochAt is the epoch at now. The end of a planned downtime is found
// here, by the first reader past it, since no advertisement marks it.
func (r *registry) epochAt(now time.Time) uint64 {
	if end := r.downtimeEnd.Load(); end != 0 && now.UnixNano() >= end {
		r.mu.Lock()
		if end := r.downtimeEnd.Load(); end != 0 && now.UnixNano() >= end {
			r.bump()
			r.downtimeEnd.Store(0)
			for _, e := range r.servers {
				r.noteDowntime(e.cur.Load(), now)
			}
		}
		r.mu.Unlock()
	}
	return r.epoch.Load()
}

// noteDowntime keeps the end of the earliest planned downtime still to
// end; r.mu held.
func (r *registry) noteDowntime(s *Server, now time.Time) {
	if s.Downtime == nil || !s.Downtime.End.After(now) {
		return
	}
	if end := s.Downtime.End.UnixNano(); r.downtimeEnd.Load() == 0 || end < r.downtimeEnd.Load() {
		r.downtimeEnd.Store(end)
	}
}

// atRoots returns the servers of role at the root endpoints roots that
// cover name and that keep accepts, sorted by name, as covering does.
func (r *registry) atRoots(role, name string, roots []string, keep func(*Server) bool) []*Server {
	var out []*Server
	r.mu.Lock()
	for _, root := range roots {
		for _, e := range r.byRoot[root] {
			if s := e.cur.Load(); s.Role == role && s.holds(name) && keep(s) {
				out = append(out, s)
			}
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	return out
}
