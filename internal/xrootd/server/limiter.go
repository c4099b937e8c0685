package server

import (
	"log/slog"
	"sync"
	"time"

	"sitebox/internal/clientnet"
)

// limiter counts sessions and open files per client address, per client
// network and in total, and the pooled buffers per address. Safe for
// concurrent use.
type limiter struct {
	lim Limits
	log *slog.Logger

	mu       sync.Mutex
	sessions int
	files    int
	clients  map[string]*clientUse // address → use; dropped when it holds nothing
	networks map[string]*clientUse // network → use; likewise
	notes    refusalNotes
	refusals map[string]int64 // by limit (limitScope.label), for metrics
	reclaims map[string]int64 // sessions closed to make room, by why
	// lastAddr's network (clientnet.Of) is kept: opens come one after
	// another from the same client, and naming its network allocates.
	lastAddr, lastNet string
}

// clientUse is what one client address or network holds.
type clientUse struct{ sessions, files, buffers int }

func (c *clientUse) empty() bool { return c.sessions <= 0 && c.files <= 0 && c.buffers <= 0 }

func newLimiter(lim Limits, log *slog.Logger) *limiter {
	lim.defaults()
	return &limiter{lim: lim, log: log, clients: map[string]*clientUse{}, networks: map[string]*clientUse{},
		refusals: map[string]int64{}, reclaims: map[string]int64{}}
}

// tally is one kind of count (sessions or open files): where it is kept
// in a clientUse and in total, and its limits.
type tally struct {
	what                         string
	count                        func(*clientUse) *int
	total                        *int
	perClient, perNetwork, limit int
}

func (l *limiter) tally(what string) tally {
	if what == whatFiles {
		return tally{what, func(c *clientUse) *int { return &c.files }, &l.files,
			l.lim.OpenFilesPerClient, l.lim.OpenFilesPerNetwork, l.lim.OpenFiles}
	}
	return tally{what, func(c *clientUse) *int { return &c.sessions }, &l.sessions,
		l.lim.SessionsPerClient, l.lim.SessionsPerNetwork, l.lim.Sessions}
}

// add counts one more of what for the client address addr, or says which
// limit refuses it: the address's, its network's or the server's, checked
// in that order. A refusal counts nothing and is not logged (see refuse).
func (l *limiter) add(addr, what string) *limitError {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tally(what)
	network := l.networkOf(addr)
	c, n := use(l.clients, addr), use(l.networks, network)
	var err *limitError
	switch {
	case exceeds(*t.count(c), t.perClient):
		err = &limitError{what, fromAddress(addr), t.perClient}
	case exceeds(*t.count(n), t.perNetwork):
		err = &limitError{what, limitScope{scopeNetwork, network}, t.perNetwork}
	case exceeds(*t.total, t.limit):
		err = &limitError{what, onServer, t.limit}
	default:
		*t.count(c)++
		*t.count(n)++
		*t.total++
		return nil
	}
	drop(l.clients, addr, c)
	drop(l.networks, network, n)
	return err
}

// networkOf is clientnet.Of(addr), under l.mu.
func (l *limiter) networkOf(addr string) string {
	if addr != l.lastAddr {
		l.lastAddr, l.lastNet = addr, clientnet.Of(addr)
	}
	return l.lastNet
}

// remove forgets one of what counted by add for addr.
func (l *limiter) remove(addr, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tally(what)
	network := l.networkOf(addr)
	c, n := use(l.clients, addr), use(l.networks, network)
	*t.count(c)--
	*t.count(n)--
	*t.total--
	drop(l.clients, addr, c)
	drop(l.networks, network, n)
}

// addSession counts a new session from addr, or says which limit refuses it.
func (l *limiter) addSession(addr string) *limitError { return l.add(addr, whatSessions) }

// dropSession forgets a session counted by addSession.
func (l *limiter) dropSession(addr string) { l.remove(addr, whatSessions) }

// addFile counts a file about to be opened by a session of addr, or says
// which limit refuses it.
func (l *limiter) addFile(addr string) *limitError { return l.add(addr, whatFiles) }

// dropFile forgets a file counted by addFile.
func (l *limiter) dropFile(addr string) { l.remove(addr, whatFiles) }

// takeBuffer counts a pooled buffer for addr if the address holds fewer
// than max (or always, with force) and reports whether it did.
func (l *limiter) takeBuffer(addr string, max int, force bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := use(l.clients, addr)
	if !force && c.buffers >= max {
		drop(l.clients, addr, c)
		return false
	}
	c.buffers++
	return true
}

// dropBuffer forgets a buffer counted by takeBuffer.
func (l *limiter) dropBuffer(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := use(l.clients, addr)
	c.buffers--
	drop(l.clients, addr, c)
}

func use(m map[string]*clientUse, key string) *clientUse {
	c := m[key]
	if c == nil {
		c = &clientUse{}
		m[key] = c
	}
	return c
}

func drop(m map[string]*clientUse, key string, c *clientUse) {
	if c.empty() {
		delete(m, key)
	}
}

// refuse notes a refusal of addr past a limit: counted for the metrics,
// and logged unless the same one was logged for addr within the last
// burst window (the next log line says how many were not logged).
func (l *limiter) refuse(addr string, err *limitError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refusals[err.scope.label(err.what)]++
	if n, ok := l.notes.note(addr+" "+err.what+" "+err.scope.String(), time.Now()); ok {
		l.log.Warn("limit reached; refusing", "client", addr, "err", err.Error(), "refused_since_last_log", n)
	}
}

// reclaimed notes a session of victim closed to make room under limit
// for a client of addr: why is "idle" (it held nothing) or "silent" (it
// held only files open for reading, untouched for the idle timeout).
// Logged once per burst for each limit and why.
func (l *limiter) reclaimed(why, victim string, silentFor time.Duration, addr string, limit *limitError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reclaims[why]++
	msg := "limit reached; idle session closed to admit a new one"
	if why == reclaimSilent {
		msg = "limit reached; silent session closed to free its open files"
	}
	if n, ok := l.notes.note("reclaim "+why+" "+limit.what+" "+limit.scope.String(), time.Now()); ok {
		l.log.Warn(msg, "client", victim, "silent_for", silentFor.Round(time.Second), "for_client", addr,
			"limit", limit.Error(), "closed_since_last_log", n)
	}
}

// limitCounts is what the limiter counts, for metrics.
type limitCounts struct {
	sessions, files    int
	refusals, reclaims map[string]int64
}

func (l *limiter) counts() limitCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := limitCounts{sessions: l.sessions, files: l.files, refusals: map[string]int64{}, reclaims: map[string]int64{}}
	for k, v := range l.refusals {
		c.refusals[k] = v
	}
	for k, v := range l.reclaims {
		c.reclaims[k] = v
	}
	return c
}
