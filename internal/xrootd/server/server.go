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
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/cksum"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
)

// Config tunes the server. The zero value is valid; defaults are noted.
type Config struct {
	// TPC reaches the source of a root:// third-party copy this server is
	// the destination of. Nil: such copies are refused and query config
	// answers tpc 0.
	TPC tpc.Remote
	// CopyBuffers bounds the memory of the copies this server runs; the
	// box gives every frontend the same one, so the bound is box-wide.
	// Nil: a budget of this server's own (tpc.BufferMemoryFor(0)).
	CopyBuffers *tpc.Budget
	// MaxReadChunk is the size of the pooled transfer buffers and so the
	// largest data frame of a buffered read, pgread or readv response;
	// bigger reads go out as several frames (kXR_oksofar or partial
	// kXR_status). Reads sent with sendfile need no buffer and use frames
	// of up to 8 MiB. Rounded down to a multiple of 4 KiB, at least 64 KiB.
	// Default 2 MiB, as XRootD. readv segments are limited to
	// MaxReadChunk-16 bytes (announced as readv_ior_max).
	MaxReadChunk int
	// MaxRequestData caps a write or pgwrite payload (default 16 MiB +
	// 64 KiB: room for xrdcp's 8 MiB chunks and their CRCs). A larger
	// frame is answered with kXR_ArgTooLong and the connection closed, as
	// it cannot be resynchronised without reading the payload.
	MaxRequestData int
	// MaxInFlight bounds the requests one connection has executing at
	// once (default 64); the session stops reading until one finishes.
	MaxInFlight int
	// MaxBufferMemory bounds the memory of the pooled transfer buffers
	// (default 32 MiB, at least two chunks). Each connection holds at most
	// two; when all are in use, requests use 64 KiB spare buffers instead
	// of waiting (readv with larger segments waits for the pool).
	MaxBufferMemory int
	// Checksums are the algorithms the box offers, which query config
	// chksum lists; the store computes them (and refuses the others).
	// The zero value: adler32 and crc32c.
	Checksums cksum.Offered
	// ReadOnly refuses every change (kXR_fsReadOnly) even where the store
	// allows it.
	ReadOnly bool
	// DisablePgRW stops announcing kXR_suppgrw. Clients then use plain
	// reads and writes (sent with sendfile) instead of pgread/pgwrite with
	// per-page CRC32C; pgread and pgwrite are still served if asked for.
	DisablePgRW bool
	// Manager announces a redirector (kXR_isManager) instead of a data
	// server, as a cmsd manager does. XRootD clients then treat it as
	// their load balancer: they come back to it with tried= when the
	// server it sent them to fails, and `xrdfs ls` lists every server
	// it locates instead of asking it alone.
	Manager bool
	// TLS enables roots://: the server announces kXR_haveTLS and switches
	// a client that asks for it to TLS before login. Nil: plain only.
	TLS *tls.Config
	// Auth verifies the credentials clients present: bearer tokens, from
	// the ztn security protocol (over TLS) and from authz= CGI (ignored
	// when it takes none), and Kerberos tickets from the krb5 protocol
	// (offered when it takes them, see krb5.go). Nil: none.
	Auth *auth.Authenticator
	// GSI answers XRootD's gsi security protocol, the handshake proving
	// an X.509 chain, which it hands to Auth (see gsi.go). Nil: not
	// offered.
	GSI *gsi.Server
	// Observer is told of the bytes moved and the connections, for
	// metrics. Nil: nothing is counted.
	Observer store.TransferObserver
	// ServerName names this server in logs and is the default Site
	// (default "sitebox").
	ServerName string
	// Site is the answer to query config "sitename" (default ServerName).
	Site string
	// WriteTimeout bounds the wait for a client to take more of a response
	// (default 1 minute): one that stops reading its answers is
	// disconnected then, freeing its buffer. Over plain TCP it is the time
	// without progress; over TLS, the time for one frame (at most
	// MaxReadChunk).
	WriteTimeout time.Duration
	// RequestTimeout bounds the wait for the rest of a request once its
	// first byte arrived: the 24-byte header and its payload, a write's
	// data included (default 1 minute without a byte). A client that
	// starts a request and goes silent is disconnected then.
	RequestTimeout time.Duration
	// Limits bound sessions and open files per client address and in
	// total (see Limits for the defaults).
	Limits Limits
	// HandshakeTimeout bounds the wait for a new connection's hello
	// (default 30 seconds).
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection that has no open files and no
	// requests in flight for this long, so abandoned connections do not
	// hold descriptors for ever; a connection whose files, all open for
	// reading, have been untouched this long may be closed when others
	// need its place (reclaim.go). Default 6 minutes (21 for a Manager):
	// a minute longer than the XRootD client keeps a connection it does
	// not use (XrdCl's DataServerTTL of 5 minutes; LoadBalancerTTL, 20,
	// for a redirector), so that the client closes it first.
	IdleTimeout time.Duration
	// AccessLog takes one line per file, from open to close. Nil: none.
	AccessLog accesslog.Sink
	// DrainTo (host:port) is where a draining server (see Drain) sends
	// requests that would start new work: the director this server
	// belongs to. Empty: they are told to wait DrainWait instead.
	DrainTo string
	// DrainWait is the kXR_wait a draining server answers with when it
	// has no DrainTo (default 3 s).
	DrainWait time.Duration
	// setupGrace is how long a new session is safe from being closed for
	// a newcomer from its own address (default defaultSetupGrace; tests
	// shorten it).
	setupGrace time.Duration
}

func (c *Config) defaults() {
	if c.MaxReadChunk <= 0 {
		c.MaxReadChunk = 2 << 20
	}
	c.MaxReadChunk = max(c.MaxReadChunk&^(proto.PgPageSize-1), 64<<10)
	if c.MaxRequestData <= 0 {
		c.MaxRequestData = 16<<20 + 64<<10
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 64
	}
	if c.MaxBufferMemory <= 0 {
		c.MaxBufferMemory = 32 << 20
	}
	if c.CopyBuffers == nil {
		c.CopyBuffers = tpc.NewBudget(tpc.BufferMemoryFor(0))
	}
	if c.ServerName == "" {
		c.ServerName = "sitebox"
	}
	if c.Site == "" {
		c.Site = c.ServerName
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = time.Minute
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = time.Minute
	}
	c.Limits.defaults()
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 30 * time.Second
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = defaultIdleTimeout
		if c.Manager {
			c.IdleTimeout = defaultManagerIdleTimeout
		}
	}
	if c.DrainWait <= 0 {
		c.DrainWait = defaultDrainWait
	}
	if c.setupGrace <= 0 {
		c.setupGrace = defaultSetupGrace
	}
}

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
	started  time.Time  // reported by query config "start"
	tpc      tpcGrants  // root:// third-party copy grants (tpc.go)
	prepIDs  prepareIDs // request ids of prepare -s (stats.go)

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

// The default idle timeouts: a minute longer than XrdCl keeps an unused
// connection to a data server (DataServerTTL, 300 s) and to a redirector
// (LoadBalancerTTL, 1200 s).
const (
	defaultIdleTimeout        = 6 * time.Minute
	defaultManagerIdleTimeout = 21 * time.Minute
)

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
// are redirected to DrainTo or told to wait, and each session is closed
// once it holds nothing. When every session is gone, or ctx ends, it
// shuts down as Shutdown does (cutting what is left).
func (s *Server) Drain(ctx context.Context) error { return s.DrainVia(ctx, s.cfg.DrainTo) }

// DrainVia is Drain sending new requests to the root:// server to
// (host:port; "" tells them to wait): the director the box learned it
// belongs to after it started, when Config.DrainTo names none.
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
