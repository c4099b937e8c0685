package server

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sitebox/internal/clientnet"
	"sitebox/internal/nbio"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/gsi"
	"sitebox/internal/xrootd/proto"
)

// maxArgLen bounds the payload of requests other than write and pgwrite:
// paths with their CGI (tokens included), readv lists, query arguments.
const maxArgLen = 256 << 10

// session is one client connection.
type session struct {
	srv *Server
	raw net.Conn // the TCP connection, closed to end the session
	// conn carries the protocol: raw, or a TLS session over it once the
	// client switched (set under wmu before login, read-only after).
	conn net.Conn
	// plain reaches the socket for reads and writes that skip the
	// scheduler's bookkeeping (nbio); nil for a socket that is not TCP or
	// a platform without them. Used while conn is raw.
	plain  syscall.RawConn
	tlsw   *bufio.Writer  // over conn once it is TLS; used under wmu
	batch  *recordBatcher // under the TLS session; flushed after each response
	br     *bufio.Reader
	hdr    [proto.RequestHeaderLen]byte // the request header being read (reader only)
	log    *slog.Logger
	ctx    context.Context // ends when the session does
	cancel context.CancelFunc
	sessID [16]byte
	// clientIP is the client's address as stores see it (store.Request),
	// network its network for the limits (clientnet).
	clientIP, network string

	wmu sync.Mutex // serialises frames on conn
	// files is the session's file table; a bound substream shares its
	// main session's (set before the bind is published).
	files *fileTable
	slots chan struct{} // requests executing
	dataQ chan dataReq  // reads waiting for the data lane
	// laneQueued counts the requests put on dataQ and not yet served:
	// while any is, the reader may not serve one itself (serveInline),
	// which would answer it ahead of them. laneMu is held by whichever
	// goroutine serves a data request.
	laneQueued atomic.Int32
	laneMu     sync.Mutex
	nsTail     chan struct{} // closed when the last namespace change read has run; reader only
	bufShare   chan struct{} // transfer buffers held
	wg         sync.WaitGroup

	// parked holds a place per readv waiting for its data to arrive off
	// the lane (see parkReadv); readyQ has those whose data arrived.
	parked chan struct{}
	readyQ chan dataReq

	// refusal is set for a session over a limit: it is told why and
	// closed (refuse.go).
	refusal error
	// readWait is the read deadline each read of the socket sets (see
	// timedReader); zero leaves the deadline alone. Reader goroutine only.
	readWait time.Duration
	// readDL is the connection's read deadline (reader goroutine only),
	// writeDL its write deadline (under wmu).
	readDL, writeDL lazyDeadline

	loggedIn bool // reader goroutine only
	tls      bool // conn is TLS; set before login
	// authNeeded is set when the login answer asked for kXR_auth; no
	// other request is served until it succeeds.
	authNeeded bool
	// identity is the token the client authenticated with (ztn), nil if
	// anonymous; set by kXR_auth before any store call.
	identity *store.Identity
	// authErr is why the client's ztn token was refused, nil if it
	// sent none or one that passed; set by kXR_auth before any store
	// call, and the AuthError of every request without authz= after.
	authErr error
	// gsi is the connection's gsi exchange once the client started one
	// (gsi.go); reader goroutine only.
	gsi *gsi.Handshake
	// login is "user.pid" from kXR_login, by which root:// TPC names the
	// client (tpc.go); set before any request runs.
	login string

	// bindMu protects bindAs: what a substream binding to this session
	// takes over, set once the client is logged in and authenticated.
	bindMu sync.Mutex
	bindAs *bindInfo
	// subs are the substreams bound to this session (bind.go).
	subs substreams
	// parent is the session this one is a substream of, with its path
	// id; set by kXR_bind on the reader goroutine before any other use.
	parent *session
	pathID byte
	// done is closed when run has returned and released everything.
	done chan struct{}
	// active is when a request of the session last arrived or ended (Unix
	// nanoseconds): how long it has been silent, for reclaim.go.
	active atomic.Int64
	// serving counts the requests being served (serve), the data lane's
	// included, which no queue or slot shows.
	serving atomic.Int32
	// born is when the connection was accepted.
	born time.Time
	// evicted is set when the server closed the session to make room
	// for another (reclaim.go); its place was given back then.
	evicted atomic.Bool
	// appidLogged is set once kXR_set appid was logged (set.go).
	appidLogged atomic.Bool
}

func newSession(s *Server, c net.Conn) *session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{
		srv:      s,
		raw:      c,
		conn:     c,
		clientIP: hostOf(c.RemoteAddr()),
		log:      s.log.With("client", c.RemoteAddr().String()),
		ctx:      ctx,
		cancel:   cancel,
		slots:    make(chan struct{}, s.cfg.MaxInFlight),
		dataQ:    make(chan dataReq, s.cfg.MaxInFlight),
		parked:   make(chan struct{}, s.cfg.MaxInFlight),
		readyQ:   make(chan dataReq, s.cfg.MaxInFlight),
		bufShare: make(chan struct{}, 2),
		files:    &fileTable{max: s.cfg.Limits.OpenFilesPerSession},
		done:     make(chan struct{}),
		born:     time.Now(),
	}
	sess.network = clientnet.Of(sess.clientIP)
	if tc, ok := c.(*net.TCPConn); ok && nbio.Supported {
		sess.plain, _ = tc.SyscallConn()
	}
	sess.readDL.set = func(t time.Time) error { return sess.conn.SetReadDeadline(t) }
	sess.writeDL.set = func(t time.Time) error { return sess.conn.SetWriteDeadline(t) }
	sess.br = bufio.NewReaderSize(timedReader{sess}, 16<<10)
	rand.Read(sess.sessID[:])
	sess.touch()
	return sess
}

// run serves the connection until the client leaves or breaks the
// protocol, then waits for its requests and closes its files.
func (s *session) run() {
	defer close(s.done)
	defer func() {
		// A substream frees its path id before its connection closes: a
		// client that sees the close may bind again at once.
		if s.parent != nil {
			s.parent.subs.drop(s)
		}
		s.close()
		s.endSubstreams() // bind.go
		s.wg.Wait()
		if s.parent != nil { // the files are the main session's
			return
		}
		for range s.files.closeAll(s.log, s.logTransfer) {
			s.srv.limits.dropFile(s.clientIP)
		}
	}()
	if s.refusal != nil {
		s.refuse()
		return
	}
	if err := s.handshake(); err != nil {
		s.log.Debug("handshake failed", "err", err)
		return
	}
	s.wg.Add(1)
	go s.dataLane()
	for s.serveNext() {
	}
}

// serveNext reads the next request off the connection and serves it or
// hands it on; false ends the session (the client left, or broke the
// protocol in a way that leaves the stream unreadable).
func (s *session) serveNext() bool {
	if err := s.awaitRequest(); err != nil {
		s.logReadErr(err)
		return false
	}
	// The request has begun: the rest of it must keep coming.
	s.readWait = s.srv.cfg.RequestTimeout.D()
	s.touch()
	if _, err := io.ReadFull(s.br, s.hdr[:]); err != nil {
		s.logReadErr(err)
		return false
	}
	req, dlen := proto.DecodeRequestHeader(s.hdr[:])
	if s.parent != nil && req.ID != proto.ReqPing {
		// A substream carries answers only; its client sends requests on
		// the main connection. Its payload cannot be trusted to be
		// drained, so the substream ends (as xrootd ends one that is
		// sent a write it did not expect).
		msg := fmt.Sprintf("%s sent on substream %d: a bound substream carries only answers; send requests on the main connection", req.Name(), s.pathID)
		s.log.Info("protocol violation; closing the substream", "err", msg)
		s.sendError(req.Stream, proto.ErrInvalidRequest, msg)
		return false
	}
	if dlen < 0 || int64(dlen) > int64(s.srv.cfg.MaxRequestData) {
		msg := fmt.Sprintf("%s request declares a payload of %d bytes (limit %d); closing the connection", req.Name(), dlen, s.srv.cfg.MaxRequestData)
		s.log.Warn("protocol violation", "err", msg)
		s.sendError(req.Stream, proto.ErrArgTooLong, msg)
		return false
	}
	if req.ID == proto.ReqWrite || req.ID == proto.ReqPgwrite {
		// Writes are served by the reader itself: their payload has to
		// come off the socket before anything else can, and serving
		// them in order keeps a following close behind them.
		if err := s.serveWrite(&req, int(dlen)); err != nil {
			s.logReadErr(err)
			return false
		}
		return true
	}
	if req.ID == proto.ReqWritev {
		// The same, for the data that follows a writev's list.
		if err := s.serveWritev(&req, int(dlen)); err != nil {
			s.logReadErr(err)
			return false
		}
		return true
	}
	if dlen > maxArgLen {
		if _, err := io.CopyN(io.Discard, s.br, int64(dlen)); err != nil {
			s.logReadErr(err)
			return false
		}
		s.sendError(req.Stream, proto.ErrArgTooLong, fmt.Sprintf("%s argument of %d bytes exceeds the limit of %d", req.Name(), dlen, maxArgLen))
		return true
	}
	if dlen > 0 {
		req.Data = make([]byte, dlen)
		if _, err := io.ReadFull(s.br, req.Data); err != nil {
			s.logReadErr(err)
			return false
		}
	}
	return s.dispatch(&req)
}

// errIdle ends a session that held nothing for IdleTimeout.
var errIdle = errors.New("idle")

// awaitRequest waits for the first byte of the next request. A session
// that holds nothing (no open file, no request executing) for IdleTimeout is
// ended; one that is busy is left alone however long its client is quiet.
func (s *session) awaitRequest() error {
	s.readWait = 0
	if s.br.Buffered() > 0 {
		return nil // the client sent it with the one before
	}
	for {
		s.readDL.within(s.srv.cfg.IdleTimeout.D())
		_, err := s.br.Peek(1)
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			return err
		}
		if s.idle() {
			return fmt.Errorf("%w for %v with no open files", errIdle, s.srv.cfg.IdleTimeout.D())
		}
	}
}

func (s *session) logReadErr(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) {
		s.log.Debug("connection ended", "err", err)
		return
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		s.log.Info("client left in the middle of a request")
		return
	}
	if errors.Is(err, errIdle) {
		s.log.Debug("closing idle connection", "err", err)
		return
	}
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		s.log.Info("client stalled in the middle of a request; closing", "timeout", s.srv.cfg.RequestTimeout.D())
		return
	}
	s.log.Info("connection ended", "err", err)
}
