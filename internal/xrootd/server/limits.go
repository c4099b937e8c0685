package server

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"sitebox/internal/xrootd/proto"
)

// Limits bound what one client address, one session and all clients
// together may hold, so that a handful of connections cannot take the
// server's descriptors from everyone else. Zero fields take the defaults
// noted; a negative field means no limit. Where the process may open
// fewer descriptors than the defaults need, the default totals shrink to
// fit: sessions to an eighth, open files to half of them.
type Limits struct {
	// Sessions bounds the connections of all clients together (default
	// 4096: with OpenFiles, well under a common descriptor limit of 65536).
	Sessions int
	// SessionsPerClient bounds the connections from one address (default
	// 512). XrdCl shares one connection per server among all the files a
	// process opens, but every job on a batch farm behind NAT arrives from
	// the same address, so this is generous.
	SessionsPerClient int
	// OpenFiles bounds the files open by all sessions together (default
	// 32768).
	OpenFiles int
	// OpenFilesPerClient bounds the files open by the sessions of one
	// address (default 4096).
	OpenFilesPerClient int
	// OpenFilesPerSession bounds one session's file table (default 1024; a
	// ROOT job rarely keeps more than a few dozen files open).
	OpenFilesPerSession int
	// SubstreamsPerSession bounds the connections a session may bind to
	// itself with kXR_bind for parallel data streams (`xrdcp -S N`):
	// default and most 15, as xrootd; negative is the protocol's 15.
	// Each substream is a session for the limits above, too.
	SubstreamsPerSession int
}

func (l *Limits) defaults() { l.defaultsFor(descriptorLimit()) }

// defaultsFor fills the defaults for a process that may open fds
// descriptors (0: unknown).
func (l *Limits) defaultsFor(fds int) {
	sessions, files := 4096, 32768
	if fds > 0 {
		sessions, files = max(min(sessions, fds/8), 1), max(min(files, fds/2), 1)
	}
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	set(&l.Sessions, sessions)
	set(&l.SessionsPerClient, min(512, sessions))
	set(&l.OpenFiles, files)
	set(&l.OpenFilesPerClient, min(4096, files))
	set(&l.OpenFilesPerSession, min(1024, files))
	if l.SubstreamsPerSession <= 0 || l.SubstreamsPerSession > maxSubstreams {
		l.SubstreamsPerSession = maxSubstreams
	}
}

// exceeds reports whether n more than held reaches past limit (negative:
// unlimited).
func exceeds(held, limit int) bool { return limit >= 0 && held >= limit }

// limitError is the refusal of a session or an open past a limit. Its
// message names the limit; its code is kXR_Overloaded, which XRootD
// answers for "too many users" (EUSERS), so the client may come back later
// or go to another server — except for a session's own file table, which
// XRootD refuses with kXR_NoMemory, as nothing but the client's own closes
// can help there.
type limitError struct {
	what  string // "sessions", "open files"
	scope string // "from 192.0.2.1", "on this server", "in this session"
	limit int
}

func (e *limitError) Error() string {
	return fmt.Sprintf("too many %s %s (limit %d); close some and retry later", e.what, e.scope, e.limit)
}

func (e *limitError) code() int32 {
	if e.scope == inSession {
		return proto.ErrNoMemory
	}
	return proto.ErrOverloaded
}

// inSession is the scope of the per-session open-file limit.
const inSession = "in this session"

// limiter counts sessions and open files per client address and in total.
// Safe for concurrent use.
type limiter struct {
	lim Limits
	log *slog.Logger

	mu       sync.Mutex
	sessions int
	files    int
	clients  map[string]*clientUse // address → use; dropped when it holds nothing
	notes    refusalNotes
}

// clientUse is what one client address holds.
type clientUse struct{ sessions, files, buffers int }

func newLimiter(lim Limits, log *slog.Logger) *limiter {
	lim.defaults()
	return &limiter{lim: lim, log: log, clients: map[string]*clientUse{}}
}

// addSession counts a new session from addr, or says which limit refuses
// it (logged once per address and burst).
func (l *limiter) addSession(addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	var err *limitError
	switch {
	case exceeds(c.sessions, l.lim.SessionsPerClient):
		err = &limitError{"sessions", "from " + addr, l.lim.SessionsPerClient}
	case exceeds(l.sessions, l.lim.Sessions):
		err = &limitError{"sessions", "on this server", l.lim.Sessions}
	default:
		c.sessions++
		l.sessions++
		return nil
	}
	l.refused(addr, err)
	l.drop(addr, c)
	return err
}

// dropSession forgets a session counted by addSession.
func (l *limiter) dropSession(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	c.sessions--
	l.sessions--
	l.drop(addr, c)
}

// addFile counts a file about to be opened by a session of addr.
func (l *limiter) addFile(addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	var err *limitError
	switch {
	case exceeds(c.files, l.lim.OpenFilesPerClient):
		err = &limitError{"open files", "from " + addr, l.lim.OpenFilesPerClient}
	case exceeds(l.files, l.lim.OpenFiles):
		err = &limitError{"open files", "on this server", l.lim.OpenFiles}
	default:
		c.files++
		l.files++
		return nil
	}
	l.refused(addr, err)
	l.drop(addr, c)
	return err
}

// dropFile forgets a file counted by addFile.
func (l *limiter) dropFile(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	c.files--
	l.files--
	l.drop(addr, c)
}

// takeBuffer counts a pooled buffer for addr if the address holds fewer
// than max (or always, with force) and reports whether it did.
func (l *limiter) takeBuffer(addr string, max int, force bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	if !force && c.buffers >= max {
		l.drop(addr, c)
		return false
	}
	c.buffers++
	return true
}

// dropBuffer forgets a buffer counted by takeBuffer.
func (l *limiter) dropBuffer(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.use(addr)
	c.buffers--
	l.drop(addr, c)
}

// refusedSession notes a refusal made outside the counters (a session's
// own file table), for the once-per-burst log.
func (l *limiter) refusedSession(addr string, err *limitError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused(addr, err)
}

func (l *limiter) use(addr string) *clientUse {
	c := l.clients[addr]
	if c == nil {
		c = &clientUse{}
		l.clients[addr] = c
	}
	return c
}

func (l *limiter) drop(addr string, c *clientUse) {
	if c.sessions <= 0 && c.files <= 0 && c.buffers <= 0 {
		delete(l.clients, addr)
	}
}

// refused logs a refusal unless the same one was logged for addr within
// the last burst window; the next log line says how many were not logged.
// l.mu is held.
func (l *limiter) refused(addr string, err *limitError) {
	if n, ok := l.notes.note(addr+" "+err.what+" "+err.scope, time.Now()); ok {
		l.log.Warn("limit reached; refusing", "client", addr, "err", err.Error(), "refused_since_last_log", n)
	}
}

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
