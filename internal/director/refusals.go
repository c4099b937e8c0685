package director

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLog logs refused advertisements at a bounded rate: a flood of
// forged ads, or a misconfigured box retrying every second, must not fill
// the director's log. The same refusal (same sender and reason) is logged
// once per refusalRepeat; and past refusalBurst lines in a refusalWindow,
// refusals are only counted. The count of what was not logged goes with
// the next line that is.
type refusalLog struct {
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
	seen       map[string]time.Time // refusal key → when last logged
}

const (
	refusalBurst  = 10
	refusalWindow = 10 * time.Second
	refusalRepeat = time.Minute
	refusalKeys   = 1024 // bounds seen; cleared when full
)

// log logs msg unless key was logged within refusalRepeat or the burst
// is spent.
func (l *refusalLog) log(log *slog.Logger, key, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) > refusalWindow {
		l.start, l.n = now, 0
	}
	if l.seen == nil || len(l.seen) >= refusalKeys {
		l.seen = map[string]time.Time{}
	}
	if last, ok := l.seen[key]; (ok && now.Sub(last) < refusalRepeat) || l.n >= refusalBurst {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	l.seen[key] = now
	l.n++
	if l.suppressed > 0 {
		args = append(args, "not_logged_before", l.suppressed)
		l.suppressed = 0
	}
	l.mu.Unlock()
	log.Warn(msg, args...)
}
