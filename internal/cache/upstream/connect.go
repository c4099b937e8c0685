package upstream

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"sitebox/internal/store"
)

// connectRetry is how long after a failed round of dials a Set waits
// before dialing that server's streams again: an unreachable server
// costs a burst of failed dials per interval, not one per client open.
// Streams that connected and later dropped (a cut that healed at once,
// a server restart) are dialed again at once: until they are, every
// retried fetch queues on the few streams its retries re-dialed, behind
// each other (seen: 10 s of retries in a row on one stream at 1 MB/s).
const connectRetry = 10 * time.Second

// connecter is an upstream client that can dial its server ahead of its
// first request (root://; an https pool dials per request).
type connecter interface {
	Connect(ctx context.Context) error
	Connected() bool
}

// connected reports whether a request to s costs no dial first (true
// for clients that do not say, such as https pools).
func connected(s store.Store) bool {
	c, ok := s.(connecter)
	return !ok || c.Connected()
}

// wantConnected asks the connector to dial u's streams not connected:
// a file's reads spread over all of them, and a read sent to a stream
// not yet connected waits for a dial and a login (two round trips or
// more) besides its open. Without it, every cold start paid that on its
// first vector reads.
func (s *Set) wantConnected(u *Server) {
	if u.connecting.Load() || u.connectFailed.Load() && time.Now().UnixNano()-u.connectedAt.Load() < int64(connectRetry) {
		return
	}
	all := true
	for _, st := range u.Streams {
		all = all && connected(st)
	}
	if all || !u.connecting.CompareAndSwap(false, true) {
		return
	}
	select {
	case s.connectCh <- u:
	default: // the connector is busy with other servers: a later open asks again
		u.connecting.Store(false)
	}
}

// Run dials the streams wantConnected asks for until ctx ends.
func (s *Set) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-s.connectCh:
			s.connect(ctx, u)
		}
	}
}

// connect dials u's streams not connected, all at once.
func (s *Set) connect(ctx context.Context, u *Server) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.FetchTimeout)
	defer cancel()
	var g errgroup.Group
	for _, st := range u.Streams {
		if cs, ok := st.(connecter); ok && !cs.Connected() {
			g.Go(func() error { return cs.Connect(ctx) })
		}
	}
	err := g.Wait()
	if err != nil && ctx.Err() == nil {
		s.opts.Log.Debug("connecting upstream streams", "upstream", u.Name, "err", err)
	}
	u.connectFailed.Store(err != nil)
	u.connectedAt.Store(time.Now().UnixNano())
	u.connecting.Store(false)
}
