package director

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLog logs refused advertisements at a bounded rate: a flood of
// forged ads must not fill the disk with the director's log. Past
// refusalBurst lines in a refusalWindow, refusals are only counted, and
// the count is logged with the next line that is let through.
type refusalLog struct {
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

const (
	refusalBurst  = 20
	refusalWindow = 10 * time.Second
)

func (l *refusalLog) log(log *slog.Logger, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) > refusalWindow {
		l.start, l.n = now, 0
	}
	l.n++
	if l.n > refusalBurst {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	if l.suppressed > 0 {
		args = append(args, "not_logged_before", l.suppressed)
		l.suppressed = 0
	}
	l.mu.Unlock()
	log.Warn(msg, args...)
}
