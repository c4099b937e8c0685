package server

import (
	"time"
)

// A limit reached by sessions that hold nothing does not lock a new
// client out: before refusing a session or an open past a limit shared
// with others (an address's, a network's, the server's), the server
// closes a session counted under that limit that it can take back
// without loss, the one silent longest first, and admits the newcomer.
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

// reclaim closes the session that may be taken back under limit (see
// above) and has been silent longest, for a client of addr, and returns
// it; nil if there is none.
func (s *Server) reclaim(limit *limitError, addr string) *session {
	if limit.scope.kind == scopeSession || limit.what == whatGrants {
		return nil // only the client's own closes help there
	}
	files := limit.what == whatFiles
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if files && now.Before(s.noSilentBefore) {
		return nil // nobody can have been silent long enough yet
	}
	idleAfter := s.cfg.IdleTimeout
	nextSilent := now.Add(idleAfter)
	var victim *session
	var victimHolds holding
	var victimLast time.Time
	for sess := range s.sessions {
		if sess.parent != nil || sess.refusal != nil || sess.evicted.Load() {
			continue // a substream goes with its session; a refused one counts nothing
		}
		if sess.clientIP == addr && now.Sub(sess.born) < s.cfg.setupGrace {
			continue // perhaps the newcomer's own session, binding it
		}
		h, last := sess.holding(now, idleAfter)
		if h == holdsReadOnly {
			nextSilent = earlier(nextSilent, last.Add(idleAfter))
		}
		if !limit.scope.covers(sess.clientIP) || h == holdsBusy || h == holdsReadOnly || files && h == holdsNothing {
			continue
		}
		// What holds nothing goes before what holds files, the one silent
		// longest first.
		if victim == nil || h < victimHolds || h == victimHolds && last.Before(victimLast) {
			victim, victimHolds, victimLast = sess, h, last
		}
	}
	if victim == nil {
		if files {
			s.noSilentBefore = nextSilent
		}
		return nil
	}
	why := reclaimIdle
	if victimHolds == holdsSilent {
		why = reclaimSilent
	}
	victim.evicted.Store(true)
	s.limits.dropSession(victim.clientIP)
	s.limits.reclaimed(why, victim.clientIP, now.Sub(victimLast), addr, limit)
	victim.close()
	return victim
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
