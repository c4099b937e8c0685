// Package server is sitebox's own implementation of the XRootD protocol
// (root://) over a store.Store. XRootD 5.5 clients — xrdcp, xrdfs, the
// Python bindings, uproot — work against it unchanged.
//
// Each connection is a session: one goroutine reads requests and serves
// writes as their payload arrives; reads, pgreads and readvs run in arrival
// order on a second goroutine (the data lane), as XRootD serves them (a
// readv whose data a cache is still fetching steps aside until it has
// arrived: hint.go); other
// requests (open, stat, dirlist, checksums, namespace changes) run
// concurrently, bounded per session. Responses go out one frame at a time
// under a write lock. Plain reads are sent with sendfile(2) when the
// store's file has a descriptor; everything that must pass through user
// space (pgread's CRCs, readv, a store without descriptors, writes) uses a
// bounded pool of buffers, so memory stays flat however many clients there
// are. A session holds at most two of them; when slow or hostile clients
// hold the whole pool, others get small spare buffers rather than wait
// (bufpool.go), and limits.go bounds sessions and open files per client
// address, per client network and in total, closing idle sessions to make
// room before refusing a newcomer (reclaim.go).
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sitebox/internal/keptgo"
	"sitebox/internal/store"
)

// Server serves the XRootD protocol. Safe for concurrent use.
type Server struct {
	cfg    Config
	store  store.Store
	log    *slog.Logger
	bufs   *bufPool
	spare  spareBufs
	limits *limiter
	// refusing bounds the connections kept open only to be told they are
	// over a limit; past it they are closed at once.
	refusing chan struct{}
	ident    identity
	started  time.Time    // reported by query config "start"
	tpc      tpcGrants    // root:// third-party copy grants (tpc.go)
	prepIDs  prepareIDs   // request ids of prepare -s (stats.go)
	workers  *keptgo.Pool // run the requests that run concurrently, on goroutines kept between requests

	// reclaimMu lets one open at a time close silent sessions to make
	// room for it (reclaim.go).
	reclaimMu sync.Mutex

	mu       sync.Mutex
	ln       net.Listener
	sessions map[*session]struct{}
	// noVictimBefore is, for a limit, when a session under it may next be
	// taken back to make room (reclaim.go).
	noVictimBefore map[reclaimKey]time.Time
	// under holds the sessions counted under each address and network
	// limit, so a search for one to take back looks at no other.
	under  map[limitScope]map[*session]struct{}
	closed bool
	wg     sync.WaitGroup
	// draining is set by Drain: new work is diverted (drain.go).
	draining atomic.Bool
	// drainTo is where a draining server sends new requests (host:port;
	// "" or nil: kXR_wait), set by Drain before draining.
	drainTo atomic.Pointer[string]
}

// New returns a server for st. log may be nil.
func New(cfg Config, st store.Store, log *slog.Logger) *Server {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("server", cfg.ServerName)
	n := max(cfg.MaxBufferMemory/cfg.MaxReadChunk, 2)
	return &Server{
		cfg:      cfg,
		store:    st,
		log:      log,
		bufs:     newBufPool(cfg.MaxReadChunk, n),
		limits:   newLimiter(cfg.Limits, log),
		refusing: make(chan struct{}, maxRefusing),
		ident:    currentIdentity(),
		started:  time.Now(),
		sessions: map[*session]struct{}{},
		workers:  keptgo.New(maxIdleWorkers, workerIdleAfter),
	}
}

// Serve accepts connections on ln until Shutdown, then returns nil. Other
// accept errors are returned after closing nothing: the caller owns ln.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				// Out of descriptors: back off rather than spin.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		sess := newSession(s, c)
		if err := s.admit(sess); err != nil {
			select {
			case s.refusing <- struct{}{}:
				sess.refusal = err
			default:
				c.Close() // a flood: no answer, just no descriptor held
				continue
			}
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			s.endSession(sess)
			return nil
		}
		s.sessions[sess] = struct{}{}
		s.index(sess, true)
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			if obs := s.cfg.Observer; obs != nil {
				obs.Connections("root", 1)
				defer obs.Connections("root", -1)
			}
			sess.run()
			s.mu.Lock()
			delete(s.sessions, sess)
			s.index(sess, false)
			s.mu.Unlock()
			s.endSession(sess)
		}()
	}
}

// maxRefusing bounds the connections being refused at once (see refuse).
const maxRefusing = 64

// endSession gives back what a session counted against the limits.
func (s *Server) endSession(sess *session) {
	if sess.refusal != nil {
		<-s.refusing
		return
	}
	if sess.evicted.Load() {
		return // its place was given back when it was closed (reclaim.go)
	}
	s.limits.dropSession(sess.clientIP)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Drain stops accepting and lets running transfers finish: new requests
// are redirected to DrainRedirect or told to wait, and each session is closed
// once it holds nothing. When every session is gone, or ctx ends, it
// shuts down as Shutdown does (cutting what is left).
func (s *Server) Drain(ctx context.Context) error { return s.DrainVia(ctx, s.cfg.DrainTo()) }

// DrainVia is Drain sending new requests to the root:// server to
// (host:port; "" tells them to wait): the director the box learned it
// belongs to after it started, when Config.DrainRedirect names none.
func (s *Server) DrainVia(ctx context.Context, to string) error {
	s.drainTo.Store(&to)
	s.mu.Lock()
	s.closed = true
	s.draining.Store(true)
	if s.ln != nil {
		s.ln.Close()
	}
	n := len(s.sessions)
	s.mu.Unlock()
	start := time.Now()
	if s.drain(ctx) {
		s.log.Info("drained: every session ended", "sessions", n, "redirected_to", to, "took", time.Since(start).Round(time.Millisecond))
	} else {
		s.log.Warn("drain time over; closing the sessions still busy")
	}
	// What is left is cut; give it a moment to release its files.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	return s.Shutdown(sctx)
}

// Shutdown stops accepting, closes every connection (in-flight requests
// fail fast on the closed socket) and waits for the sessions to release
// their files, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for sess := range s.sessions {
		sess.close()
	}
	s.workers.Close()
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.bufs.release()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// findSession returns the live session with the given login session ID.
func (s *Server) findSession(id [16]byte) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sess := range s.sessions {
		if sess.sessID == id {
			return sess
		}
	}
	return nil
}

// The goroutines kept for requests: a new one starts on a small stack
// and grows it through a request's calls (an open routed by a director
// goes deep); on a busy redirector that growth cost more than the
// routing itself.
const (
	maxIdleWorkers  = 16
	workerIdleAfter = 2 * time.Second
)
