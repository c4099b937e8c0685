package box

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/store"
)

// accessSwitch is the access log the frontends write to, which a reload
// may replace (or turn on or off) under running transfers. A line being
// written while the log is swapped goes to the old one before it is
// closed, never to a closed file. It is safe for concurrent use.
type accessSwitch struct {
	mu  sync.RWMutex // read: a line being written; write: a swap
	cur *accesslog.Log
}

var _ accesslog.Sink = (*accessSwitch)(nil)

// Transfer writes e to the current log, if any.
func (s *accessSwitch) Transfer(e accesslog.Entry) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur != nil {
		s.cur.Transfer(e)
	}
}

// swap makes l the log (nil: none) and closes the one before.
func (s *accessSwitch) swap(l *accesslog.Log) {
	s.mu.Lock()
	old := s.cur
	s.cur = l
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
}

// Close closes the current log.
func (s *accessSwitch) Close() error {
	s.swap(nil)
	return nil
}

// tokenSwitch is the token verifier the frontends ask, which a reload
// may replace with one for new issuers; sessions already authenticated
// keep their identity. It is a role: Run keeps the current verifier's
// keys fresh, and each new one's from the moment it is swapped in. It is
// safe for concurrent use.
type tokenSwitch struct {
	cur  atomic.Pointer[auth.Verifier]
	next chan *auth.Verifier // verifiers swapped in, for Run to run
	log  *slog.Logger
}

var _ store.TokenVerifier = (*tokenSwitch)(nil)

func newTokenSwitch(v *auth.Verifier, log *slog.Logger) *tokenSwitch {
	s := &tokenSwitch{next: make(chan *auth.Verifier, 4), log: log}
	s.cur.Store(v)
	return s
}

// Verify checks raw with the current verifier.
func (s *tokenSwitch) Verify(ctx context.Context, raw string) (*store.Identity, error) {
	return s.cur.Load().Verify(ctx, raw)
}

// swap makes v the verifier and stops the one before (tokens it already
// verified stay verified).
func (s *tokenSwitch) swap(v *auth.Verifier) {
	old := s.cur.Swap(v)
	select {
	case s.next <- v:
	default:
		// Run is not keeping up with reloads (or not running): v still
		// fetches its keys on demand.
		s.log.Warn("token verifier swapped in without background key refresh")
	}
	old.Close()
}

// Run refreshes the keys of every verifier swapped in until ctx ends.
func (s *tokenSwitch) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	run := func(v *auth.Verifier) { wg.Go(func() { v.Run(ctx) }) }
	run(s.cur.Load())
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case v := <-s.next:
			run(v)
		}
	}
}

// Close stops the current verifier.
func (s *tokenSwitch) Close() error {
	s.cur.Load().Close()
	return nil
}
