package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// waiter keeps an operation's kXR_wait budget.
type waiter struct {
	total time.Duration
	max   time.Duration // the budget (Options.MaxWait)
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
	if w.total+d > w.max {
		return fmt.Errorf("xrootd: %s: %w: %s asks to wait %v more (%q) after %v of waiting; giving up at %v",
			proto.RequestName(id), store.ErrUnavailable, addr, d, msg, w.total, w.max)
	}
	w.total += d
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
