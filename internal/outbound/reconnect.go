package outbound

import (
	"context"
	"sync"
	"time"
)

// A server that restarts refuses connections for a moment, and one that
// is gone refuses them for good. With Options.Reconnect a client tries
// such a server again, pausing between tries, within the operation's
// wait budget (Options.MaxWait, shared with the waits servers ask for);
// a server waited for in vain is remembered until it answers, so the
// next operation fails at once instead of waiting the budget again. Both
// clients (root:// and https) keep to this one schedule and record.

// reconnectPause is the first pause before another try; each further
// pause is twice the last, up to maxReconnectPause. A server restarting
// is back in a second or two and found at once; one that is gone is not
// asked more than once a couple of seconds.
const (
	reconnectPause    = 250 * time.Millisecond
	maxReconnectPause = 2 * time.Second
)

// Outage is one operation's time without its server.
type Outage struct {
	since  time.Time // when the first failed try began
	pauses int
}

// Begin notes a failed try that began at began (the first one's start
// counts); Lasted is the time since.
func (o *Outage) Begin(began time.Time) {
	if o.since.IsZero() {
		o.since = began
	}
}

// Since is when the first failed try began (zero if none failed).
func (o *Outage) Since() time.Time { return o.since }

// Lasted is the time since the first failed try began, zero if none
// failed.
func (o *Outage) Lasted() time.Duration {
	if o.since.IsZero() {
		return 0
	}
	return time.Since(o.since)
}

// Pause sleeps before the next try, at most left (what remains of the
// budget); it returns ctx's error if the caller gives up meanwhile.
func (o *Outage) Pause(ctx context.Context, left time.Duration) error {
	d := min(reconnectPause<<min(o.pauses, 8), maxReconnectPause, left)
	o.pauses++
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Unreached remembers the servers (host:port) an operation waited for
// in vain, and since when, until one answers again. The zero value is
// ready.
type Unreached struct {
	mu    sync.Mutex
	since map[string]time.Time
}

// Mark notes that host was waited for in vain since a try that began
// then (an earlier note stands).
func (u *Unreached) Mark(host string, since time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.since == nil {
		u.since = map[string]time.Time{}
	}
	if _, ok := u.since[host]; !ok {
		u.since[host] = since
	}
}

// Since reports whether host is marked, and since when.
func (u *Unreached) Since(host string) (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.since[host]
	return t, ok
}

// Answered forgets host: it was reached.
func (u *Unreached) Answered(host string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.since, host)
}
