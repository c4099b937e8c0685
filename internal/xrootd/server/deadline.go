package server

import "time"

// lazyDeadline keeps one of a connection's deadlines (read or write)
// between timeout and 1.25 × timeout ahead, setting it only when it falls
// outside that window. Setting a deadline moves a runtime timer, and a
// timer that becomes its processor's earliest wakes an idle thread to
// watch it: a vector read answered from the page cache, which used to
// reset three deadlines, then cost more in those wake-ups than in its
// copies. Re-armed lazily, a stalled client is still cut off, after
// between timeout and 1.25 × timeout without progress instead of exactly
// timeout.
type lazyDeadline struct {
	at  time.Time // zero: no deadline
	set func(time.Time) error
}

// within makes the deadline fall between timeout and 1.25 × timeout from
// now (at most 1.5 × timeout, so a shorter timeout takes over from a
// longer one at once).
func (d *lazyDeadline) within(timeout time.Duration) {
	now := time.Now()
	if d.at.Before(now.Add(timeout)) || d.at.After(now.Add(timeout+timeout/2)) {
		d.at = now.Add(timeout + timeout/4)
		d.set(d.at)
	}
}

// forget records that the deadline was changed behind the tracker's
// back (a TLS handshake clears its own): the next within sets it.
func (d *lazyDeadline) forget() { d.at = time.Time{} }
