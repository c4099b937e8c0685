package server

import (
	"time"
)

// A limit reached by sessions that hold nothing does not lock a new
// client out: before refusing a session or an open past a limit shared
// with others (an address's, a network's, the server's), the server
// closes a session counted under that limit that it can take back
// without loss, the one silent longest first (of the first 32 found, when
// there are many), and admits the newcomer.
// Such a session either
//
//   - holds nothing: no open file and no request in flight (for a limit
//     on sessions only; closing it frees no file). XrdCl keeps an unused
//     connection open for minutes and opens a new one when it needs it;
//   - or has only files open for reading and has been silent for the idle
//     timeout: XrdCl reopens a file it was reading when its connection
//     breaks, so at worst the client pays a reconnection.
//
// A session with a file open for writing, or with a request in flight, is
// never closed so: its limit then refuses the newcomer, naming itself.
// Nor is a session younger than setupGrace closed for a newcomer from its
// own address: XrdCl binds a session's substreams (`xrdcp -S N`) right
// after its login, each a connection of its own that must not end the
// session it binds to.

// Why a session was closed to make room.
const (
	reclaimIdle   = "idle"   // it held nothing
	reclaimSilent = "silent" // it held only files open for reading, untouched for the idle timeout
)

// defaultSetupGrace is how long a new session is safe from being closed
// for a newcomer from its own address: time to log in, authenticate and
// bind its substreams.
const defaultSetupGrace = 10 * time.Second

// maxReclaims bounds the sessions closed for one newcomer: one for each
// limit that may refuse it (its address's, its network's, the server's)
// and one spare.
const maxReclaims = 4

// reclaimWait bounds the wait for a closed session to give back its files.
const reclaimWait = 5 * time.Second

// admit counts a new session against the limits, closing sessions that
// hold nothing to make room, or says which limit refuses it.
func (s *Server) admit(sess *session) error {
	var refused *limitError
	for range maxReclaims {
		if refused = s.limits.addSession(sess.clientIP); refused == nil {
			return nil
		}
		if s.reclaim(refused, sess.clientIP) == nil {
			break
		}
	}
	s.limits.refuse(sess.clientIP, refused)
	return refused
}

// admitFile counts a file about to be opened by sess against the limits,
// closing silent sessions to make room, or says which limit refuses it.
func (s *Server) admitFile(sess *session) error {
	if s.limits.addFile(sess.clientIP) == nil {
		return nil
	}
	// One reclaim at a time: a burst of opens at a limit closes as many
	// sessions as it needs, not one for each open.
	s.reclaimMu.Lock()
	defer s.reclaimMu.Unlock()
	var refused *limitError
	for range maxReclaims {
		if refused = s.limits.addFile(sess.clientIP); refused == nil {
			return nil
		}
		victim := s.reclaim(refused, sess.clientIP)
		if victim == nil {
			break
		}
		timer := time.NewTimer(reclaimWait)
		select {
		case <-victim.done: // its files are closed and no longer counted
		case <-sess.ctx.Done():
		case <-timer.C:
		}
		timer.Stop()
	}
	s.limits.refuse(sess.clientIP, refused)
	return refused
}

// reclaimSample is how many sessions that may be taken back a search
// looks at before it closes the one of them silent longest: with many
// idle sessions it need not look at every session to find one.
const reclaimSample = 32

// maxExamined bounds the sessions one search looks at, so that a client
// keeping all but one busy does not make each of its connections cost a
// look at every session: the sessions looked at are a random sample
// (map order), and one idle in 16 is found with near certainty.
const maxExamined = 256

// idleRecheck is how long a search that found nothing to take back under
// a limit is not repeated for that limit: refusals meanwhile cost nothing.
const idleRecheck = 100 * time.Millisecond

// reclaim closes the session that may be taken back under limit (see
// above) and has been silent longest, for a client of addr, and returns
// it; nil if there is none.
func (s *Server) reclaim(limit *limitError, addr string) *session {
	if limit.scope.kind == scopeSession || limit.what == whatGrants {
		return nil // only the client's own closes help there
	}
	key := reclaimKey{limit.scope, limit.what}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Before(s.noVictimBefore[key]) {
		return nil // nothing under the limit can be taken back yet
	}
	victim, holds, last, next := s.pickVictim(limit, addr, now)
	if victim == nil {
		s.noVictimUntil(key, next, now)
		return nil
	}
	why := reclaimIdle
	if holds == holdsSilent {
		why = reclaimSilent
	}
	victim.evicted.Store(true)
	s.limits.dropSession(victim.clientIP)
	s.limits.reclaimed(why, victim.clientIP, now.Sub(last), addr, limit)
	victim.close()
	return victim
}

// pickVictim finds the main session under limit that may be taken back
// for a client of addr — one that holds nothing before one silent with
// files open for reading (for a limit on files, only such a one), the one
// silent longest of the first reclaimSample found — with what it holds
// and when it was last heard from. When there is none, next is when the
// search is worth making again. s.mu is held.
func (s *Server) pickVictim(limit *limitError, addr string, now time.Time) (victim *session, holds holding, last, next time.Time) {
	files := limit.what == whatFiles
	idleAfter, grace := s.cfg.IdleTimeout.D(), s.cfg.setupGrace
	next = now.Add(idleAfter) // for files: when the next reader may have been silent long enough
	if !files {
		next = now.Add(idleRecheck)
	}
	found, examined := 0, 0
	for sess := range s.sessionsUnder(limit.scope) {
		if examined++; examined > maxExamined {
			if victim == nil {
				next = now.Add(idleRecheck) // not all looked at: look again soon
			}
			break
		}
		if sess.parent != nil || sess.refusal != nil || sess.evicted.Load() {
			continue // a substream goes with its session; a refused one counts nothing
		}
		h, t := sess.holding(now, idleAfter)
		eligible := now
		if sess.clientIP == addr {
			eligible = sess.born.Add(grace) // perhaps the newcomer's own session, binding to it
		}
		if files && (h == holdsReadOnly || h == holdsSilent && now.Before(eligible)) {
			next = earlier(next, later(t.Add(idleAfter), eligible))
		}
		if now.Before(eligible) || h == holdsBusy || h == holdsReadOnly || files && h == holdsNothing {
			continue
		}
		if victim == nil || h < holds || h == holds && t.Before(last) {
			victim, holds, last = sess, h, t
		}
		if found++; found >= reclaimSample && (holds == holdsNothing || files) {
			break
		}
	}
	return victim, holds, last, next
}

// sessionsUnder returns the sessions counted under scope. s.mu is held.
func (s *Server) sessionsUnder(scope limitScope) map[*session]struct{} {
	if scope.kind == scopeServer {
		return s.sessions
	}
	return s.under[scope]
}

// index adds sess to (or, with add false, removes it from) the sessions
// under its address's and its network's limits. s.mu is held.
func (s *Server) index(sess *session, add bool) {
	if sess.refusal != nil {
		return // counted under no limit
	}
	if s.under == nil {
		s.under = map[limitScope]map[*session]struct{}{}
	}
	for _, scope := range []limitScope{fromAddress(sess.clientIP), {scopeNetwork, sess.network}} {
		m := s.under[scope]
		switch {
		case add && m == nil:
			s.under[scope] = map[*session]struct{}{sess: {}}
		case add:
			m[sess] = struct{}{}
		default:
			delete(m, sess)
			if len(m) == 0 {
				delete(s.under, scope)
			}
		}
	}
}

// reclaimKey names a limit for the searches: its scope and what it counts.
type reclaimKey struct {
	scope limitScope
	what  string
}

// maxVictimNotes bounds the limits whose next search time is noted.
const maxVictimNotes = 1024

// noVictimUntil notes that nothing under the limit key can be taken back
// before t, so that refusals meanwhile do not search again. s.mu is held.
func (s *Server) noVictimUntil(key reclaimKey, t, now time.Time) {
	if s.noVictimBefore == nil {
		s.noVictimBefore = map[reclaimKey]time.Time{}
	}
	if len(s.noVictimBefore) >= maxVictimNotes {
		for k, v := range s.noVictimBefore {
			if !now.Before(v) {
				delete(s.noVictimBefore, k)
			}
		}
		if len(s.noVictimBefore) >= maxVictimNotes {
			clear(s.noVictimBefore) // refusals under very many limits: search again
		}
	}
	s.noVictimBefore[key] = t
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// holding is what a session holds, for reclaim: the lower, the more
// readily it is closed.
type holding int

const (
	holdsNothing  holding = iota // no open file, no request in flight
	holdsSilent                  // only files open for reading, silent for the idle timeout
	holdsReadOnly                // only files open for reading, silent for less
	holdsBusy                    // a request in flight or a file open for writing
)

// holding says what the main session s and its substreams hold at now,
// and when a request of theirs last arrived or ended. Called under the
// server's lock (a substream's file table is set under it).
func (s *session) holding(now time.Time, idleAfter time.Duration) (holding, time.Time) {
	if !s.quiet() {
		return holdsBusy, time.Time{}
	}
	last, busy := s.lastActive(), false
	s.subs.each(func(sub *session) {
		busy = busy || !sub.quiet()
		if t := sub.lastActive(); t.After(last) {
			last = t
		}
	})
	if busy {
		return holdsBusy, time.Time{}
	}
	n, readOnly := s.files.summary()
	switch {
	case n == 0:
		return holdsNothing, last
	case !readOnly:
		return holdsBusy, last
	case now.Sub(last) >= idleAfter:
		return holdsSilent, last
	}
	return holdsReadOnly, last
}

// LimitStats is what the limits count, for metrics.
type LimitStats struct {
	// Sessions and OpenFiles are held now; TPCGrants are the third-party
	// copy grants waiting for their destination.
	Sessions, OpenFiles, TPCGrants int
	// Limits are the limits in force, defaults filled (-1: none).
	Limits Limits
	// TPCGrantLimits are the grant table's limits: per client, per
	// network, in total.
	TPCGrantLimits [3]int
	// Refused counts the refusals past each limit since the start, by
	// its name: sessions, sessions_per_client, sessions_per_network,
	// open_files…, open_files_per_session, tpc_grants….
	Refused map[string]int64
	// Reclaimed counts the sessions closed to make room for others, by
	// why: "idle" (they held nothing) or "silent" (they held only files
	// open for reading, untouched for the idle timeout).
	Reclaimed map[string]int64
}

// LimitStats returns what the limits count now.
func (s *Server) LimitStats() LimitStats {
	c := s.limits.counts()
	return LimitStats{Sessions: c.sessions, OpenFiles: c.files, TPCGrants: s.tpc.count(), Limits: s.limits.lim,
		TPCGrantLimits: [3]int{maxTPCGrantsPerClient, maxTPCGrantsPerNetwork, maxTPCGrants},
		Refused:        c.refusals, Reclaimed: c.reclaims}
}

// reserveFile counts a file about to be opened against the client's and
// the server's limits; the returned release undoes it, and closing the
// file (doClose, the session's end) does too.
func (s *session) reserveFile() (release func(), err error) {
	if n := s.files.count(); exceeds(n, s.files.max) {
		le := &limitError{whatFiles, inSession, s.files.max}
		s.srv.limits.refuse(s.clientIP, le)
		return nil, le
	}
	if err := s.srv.admitFile(s); err != nil {
		return nil, err
	}
	return func() { s.srv.limits.dropFile(s.clientIP) }, nil
}
