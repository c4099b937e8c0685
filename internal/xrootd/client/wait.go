package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"sitebox/internal/outbound"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// waiter keeps an operation's wait budget: for kXR_wait, and for
// reconnecting (Options.Reconnect).
type waiter struct {
	total time.Duration
	max   time.Duration   // the budget (Options.MaxWait)
	out   outbound.Outage // time without a server, for reconnect
}

// wait sleeps as a kXR_wait answer (ServerResponseBody_Wait: int32
// seconds, then a message) asks, before the request is resent to the same
// server. Waits shorter than a second (XrdCl retries at once on 0) are
// taken as one, so a server answering 0 over and over cannot make the
// client spin; a wait that would go past the budget fails at once.
func (w *waiter) wait(ctx context.Context, addr string, id uint16, body []byte) error {
	secs := int64(1)
	msg := ""
	if len(body) >= 4 {
		secs = max(int64(int32(binary.BigEndian.Uint32(body[:4]))), 1)
		msg = strings.TrimRight(string(body[4:]), "\x00\n ")
	}
	if msg == "" {
		msg = "no reason given"
	} else if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	d := time.Duration(secs) * time.Second
	if w.total+w.out.Lasted()+d > w.max {
		return fmt.Errorf("xrootd: %s: %w: %s asks to wait %v more (%q) after %v of waiting; giving up at %v",
			proto.RequestName(id), store.ErrUnavailable, addr, d, msg, w.total, w.max)
	}
	w.total += d
	return outbound.Sleep(ctx, d)
}

// reconnect sleeps before a request that failed for want of a connection
// (cause, at a try that began then) is tried again at addr. The time
// since the first such try began (the tries and the pauses) comes out of
// the same budget as kXR_wait's (Options.MaxWait), so an operation on a
// dead server fails with store.ErrUnavailable once the budget is spent,
// never hangs.
func (w *waiter) reconnect(ctx context.Context, addr string, id uint16, cause error, began time.Time) error {
	w.out.Begin(began) // the failed try's own time counts too
	spent := w.total + w.out.Lasted()
	if spent >= w.max {
		return fmt.Errorf("xrootd: %s: %w: %s unreachable for %v: %w", proto.RequestName(id), store.ErrUnavailable, addr, w.out.Lasted().Round(time.Millisecond), cause)
	}
	return w.out.Pause(ctx, w.max-spent)
}
