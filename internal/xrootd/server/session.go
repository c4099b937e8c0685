package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"sitebox/internal/xrootd/proto"
)

// session is one client connection. Requests run concurrently (bounded by
// MaxInFlight) and answer in order of completion; frames are written one at
// a time under wmu, so a multi-frame answer may interleave with others at
// frame boundaries, which the protocol allows.
type session struct {
	srv    *Server
	conn   net.Conn
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	wmu   sync.Mutex // serialises frames on conn
	files fileTable
	slots chan struct{}
	wg    sync.WaitGroup

	loggedIn bool // touched only by the reader goroutine
	sessID   [16]byte
}

func newSession(s *Server, c net.Conn) *session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &session{
		srv:    s,
		conn:   c,
		log:    s.log.With("client", c.RemoteAddr().String()),
		ctx:    ctx,
		cancel: cancel,
		slots:  make(chan struct{}, s.cfg.MaxInFlight),
	}
	rand.Read(sess.sessID[:])
	return sess
}

func (s *session) close() {
	s.cancel()
	s.conn.Close()
}

// run serves the connection until the client leaves or breaks the protocol.
func (s *session) run() {
	defer func() {
		s.close()
		s.wg.Wait() // in-flight requests finish (their writes fail fast)
		s.files.closeAll()
	}()
	if err := s.handshake(); err != nil {
		s.log.Debug("handshake failed", "err", err)
		return
	}
	for {
		req, err := proto.ReadRequest(s.conn, s.srv.cfg.MaxRequestData)
		if err != nil {
			if errors.Is(err, proto.ErrFrameTooLarge) && req != nil {
				s.sendError(req.Stream, proto.ErrArgTooLong, err.Error())
				s.log.Warn("closing connection", "err", err)
			} else if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.log.Debug("read request", "err", err)
			}
			return
		}
		if !s.dispatch(req) {
			return
		}
	}
}

// handshake reads the 20-byte client hello and answers it. Clients send
// their kXR_protocol request right behind it; that is read by the loop.
func (s *session) handshake() error {
	s.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	defer s.conn.SetReadDeadline(time.Time{})
	var hs [proto.HandshakeLen]byte
	if _, err := io.ReadFull(s.conn, hs[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(hs[12:16]) != proto.HandshakeFourth || binary.BigEndian.Uint32(hs[16:20]) != proto.HandshakeFifth {
		return errors.New("not an XRootD client hello")
	}
	var resp [16]byte
	proto.PutResponseHeader(resp[:], proto.ResponseHeader{Dlen: proto.HandshakeRespDlen})
	binary.BigEndian.PutUint32(resp[8:], proto.ProtocolVersion)
	binary.BigEndian.PutUint32(resp[12:], proto.ServerTypeData)
	return s.write(resp[:])
}

// dispatch runs one request; it returns false when the session must end.
// Session-level requests run inline so their effects are ordered; file and
// namespace requests run concurrently.
func (s *session) dispatch(req *proto.Request) bool {
	switch req.ID {
	case proto.ReqProtocol:
		s.doProtocol(req)
		return true
	case proto.ReqLogin:
		s.doLogin(req)
		return true
	case proto.ReqEndsess:
		s.sendOK(req.Stream, nil)
		return true
	case proto.ReqBind:
		s.sendError(req.Stream, proto.ErrUnsupported, "bind is not supported by this server; use one stream")
		return true
	case proto.ReqAuth:
		s.sendError(req.Stream, proto.ErrUnsupported, "no authentication protocol is configured on this server")
		return true
	case proto.ReqPing:
		s.sendOK(req.Stream, nil)
		return true
	}
	h, ok := handlers[req.ID]
	if !ok {
		s.sendError(req.Stream, proto.ErrInvalidRequest, "unknown or unsupported request "+proto.RequestName(req.ID)+" ("+strconv.Itoa(int(req.ID))+")")
		return true
	}
	if !s.loggedIn {
		s.sendError(req.Stream, proto.ErrNotAuthorized, "login required before "+req.Name())
		return true
	}
	select {
	case s.slots <- struct{}{}:
	case <-s.ctx.Done():
		return false
	}
	s.wg.Add(1)
	go func() {
		defer func() {
			<-s.slots
			s.wg.Done()
			if r := recover(); r != nil {
				s.log.Error("request panicked", "req", req.Name(), "panic", r)
				s.sendError(req.Stream, proto.ErrServerError, "internal error serving "+req.Name())
			}
		}()
		if err := h(s, req); err != nil {
			code, msg := toXrd(err)
			s.log.Debug("request failed", "req", req.Name(), "code", code, "err", msg)
			s.sendError(req.Stream, code, msg)
		}
	}()
	return true
}

// handler serves one request; a returned error is sent as kXR_error.
type handler func(s *session, req *proto.Request) error

// handlers lists the requests served concurrently after login.
var handlers = map[uint16]handler{
	proto.ReqOpen:     (*session).doOpen,
	proto.ReqRead:     (*session).doRead,
	proto.ReqReadv:    (*session).doReadv,
	proto.ReqPgread:   (*session).doPgread,
	proto.ReqWrite:    (*session).doWrite,
	proto.ReqPgwrite:  (*session).doPgwrite,
	proto.ReqSync:     (*session).doSync,
	proto.ReqTruncate: (*session).doTruncate,
	proto.ReqClose:    (*session).doClose,
	proto.ReqStat:     (*session).doStat,
	proto.ReqStatx:    (*session).doStatx,
	proto.ReqDirlist:  (*session).doDirlist,
	proto.ReqLocate:   (*session).doLocate,
	proto.ReqQuery:    (*session).doQuery,
	proto.ReqMkdir:    (*session).doMkdir,
	proto.ReqRm:       (*session).doRm,
	proto.ReqRmdir:    (*session).doRmdir,
	proto.ReqMv:       (*session).doMv,
	proto.ReqChmod:    (*session).doChmod,
	proto.ReqPrepare:  (*session).doPrepare,
}

func (s *session) doProtocol(req *proto.Request) {
	var body [8]byte
	binary.BigEndian.PutUint32(body[0:4], proto.ProtocolVersion)
	flags := proto.ProtoIsServer
	if s.srv.cfg.AdvertisePgRW {
		flags |= proto.ProtoSupPgRW
	}
	binary.BigEndian.PutUint32(body[4:8], flags)
	s.sendOK(req.Stream, body[:])
}

func (s *session) doLogin(req *proto.Request) {
	s.loggedIn = true
	user := string(trimNUL(req.Body[4:12]))
	s.log = s.log.With("user", user)
	s.sendOK(req.Stream, s.sessID[:])
}

// write sends raw bytes as one unit under the write lock.
func (s *session) write(parts ...[]byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeLocked(parts...)
}

func (s *session) writeLocked(parts ...[]byte) error {
	s.conn.SetWriteDeadline(time.Now().Add(s.srv.cfg.WriteTimeout))
	bufs := net.Buffers(parts)
	_, err := bufs.WriteTo(s.conn)
	if err != nil {
		s.close() // a half-written frame leaves the stream unusable
	}
	return err
}

// sendFrame writes one response frame: header then body parts.
func (s *session) sendFrame(stream proto.StreamID, status uint16, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	var hdr [proto.ResponseHeaderLen]byte
	proto.PutResponseHeader(hdr[:], proto.ResponseHeader{Stream: stream, Status: status, Dlen: int32(n)})
	return s.write(append([][]byte{hdr[:]}, parts...)...)
}

func (s *session) sendOK(stream proto.StreamID, body []byte) error {
	return s.sendFrame(stream, proto.StatusOK, body)
}

// sendString answers with a NUL-terminated string, as XRootD does.
func (s *session) sendString(stream proto.StreamID, str string) error {
	return s.sendFrame(stream, proto.StatusOK, []byte(str), []byte{0})
}

func (s *session) sendError(stream proto.StreamID, code int32, msg string) error {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], uint32(code))
	return s.sendFrame(stream, proto.StatusError, c[:], []byte(msg))
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
