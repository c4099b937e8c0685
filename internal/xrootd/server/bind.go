package server

import (
	"fmt"
	"sync"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxSubstreams is how many substreams one session may bind, as xrootd's
// 16 streams (the main one and 15 bound to it) allow; query config
// bind_max answers it.
const maxSubstreams = 15

// maxPio is what query config pio_max answers: the parallel I/O requests
// xrootd queues per substream (4) plus the one it is serving.
const maxPio = 5

// substreams are the connections bound to a session with kXR_bind
// (`xrdcp -S N`, XRD_SUBSTREAMSPERCHANNEL). XrdCl sends every request on
// the main connection and names, in a read, pgread or readv, the
// substream (path id) the answer should come back on; a substream carries
// nothing but those answers, each on its own TCP connection and data
// lane, so one file's chunks travel in parallel over a long fat link.
//
// Each substream is a connection of its own for the limits (sessions per
// client address and in total), and a session binds at most
// min(Limits.SubstreamsPerSession, 15) of them.
type substreams struct {
	mu    sync.Mutex // protects paths
	paths [maxSubstreams + 1]*session
}

// add gives sub the first free path id of at most max (sub.pathID, set
// before anyone can find sub here) and reports whether one was free.
func (t *substreams) add(sub *session, max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := 1; i <= max && i <= maxSubstreams; i++ {
		if t.paths[i] == nil {
			t.paths[i] = sub
			sub.pathID = byte(i)
			return true
		}
	}
	return false
}

// get returns the substream with path id id, nil if none.
func (t *substreams) get(id byte) *session {
	if id == 0 || int(id) > maxSubstreams {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.paths[id]
}

// drop frees sub's path id.
func (t *substreams) drop(sub *session) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paths[sub.pathID] == sub {
		t.paths[sub.pathID] = nil
	}
}

// each calls f for each bound substream, under the table's lock.
func (t *substreams) each(f func(*session)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.paths {
		if s != nil {
			f(s)
		}
	}
}

// all returns the bound substreams.
func (t *substreams) all() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*session
	for _, s := range t.paths {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// doBind binds this new connection to the session named by the request's
// session id, as xrootd does: the session must be logged in (and
// authenticated), on the same client host, and have a free path id. The
// answer is the path id. A substream of a TLS session must be TLS too,
// so that data asked for over roots:// never travels in clear.
func (s *session) doBind(req *proto.Request) {
	if err := s.bind(req); err != nil {
		code, msg := toXrd(err)
		s.log.Info("bind refused", "err", msg)
		s.sendError(req.Stream, code, msg)
		return
	}
	s.log.Debug("substream bound", "path", s.pathID)
	s.sendOK(req.Stream, []byte{s.pathID})
}

func (s *session) bind(req *proto.Request) error {
	if s.loggedIn || s.parent != nil {
		return errorf(proto.ErrInvalidRequest, "bind on a connection that is already logged in or bound")
	}
	var id [16]byte
	copy(id[:], req.Body[:16])
	main, isSub := s.srv.bindTarget(id)
	switch {
	case main == nil || main == s:
		return errorf(proto.ErrNotFound, "session not found")
	case isSub:
		return errorf(proto.ErrArgInvalid, "session is itself a substream")
	}
	info := main.bindInfo()
	switch {
	case info == nil:
		return errorf(proto.ErrArgInvalid, "session not logged in")
	case main.clientIP != s.clientIP:
		return errorf(proto.ErrNotAuthorized, "cross-host bind not allowed")
	case main.tls && !s.tls:
		return errorf(proto.ErrTLSRequired, "bind requires TLS")
	}
	s.identity, s.authErr, s.login = info.identity, info.authErr, info.login
	s.loggedIn = true
	// The substream takes over the session's file table before it can be
	// found among the session's substreams.
	s.srv.setParent(s, main)
	if limit := s.srv.cfg.Limits.SubstreamsPerSession; !main.subs.add(s, limit) {
		s.srv.setParent(s, nil)
		return errorf(proto.ErrNoMemory, "bind limit exceeded (%d substreams per session)", limit)
	}
	if main.ctx.Err() != nil { // it ended meanwhile and may have missed us
		main.subs.drop(s)
		s.srv.setParent(s, nil)
		return errorf(proto.ErrNotFound, "session just closed")
	}
	return nil
}

// bindTarget finds the live session with login session id id and says
// whether it is itself a substream.
func (srv *Server) bindTarget(id [16]byte) (main *session, isSub bool) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for sess := range srv.sessions {
		if sess.sessID == id {
			return sess, sess.parent != nil
		}
	}
	return nil, false
}

// setParent binds sub to main (nil: unbinds it): sub then uses main's
// file table. Under the server's lock, as drain and bindTarget look at
// every session's.
func (srv *Server) setParent(sub, main *session) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	sub.parent = main
	if main != nil {
		sub.files = main.files
	} else {
		sub.files = &fileTable{max: srv.cfg.Limits.OpenFilesPerSession}
	}
}

// pathOf returns the path id a data request asks its answer to come back
// on: read_args.pathid of a read, ClientPgReadReqArgs.pathid of a
// pgread, the pathid field of a readv. 0 (and kXR_AnyPath) is the main
// connection.
func pathOf(req *proto.Request) byte {
	var id byte
	switch req.ID {
	case proto.ReqRead:
		if len(req.Data) >= 8 {
			id = req.Data[0]
		}
	case proto.ReqPgread:
		if len(req.Data) >= 1 {
			id = req.Data[0]
		}
	case proto.ReqReadv:
		id = req.Body[15]
	}
	if id == proto.AnyPath {
		return 0
	}
	return id
}

// queueData puts a data request on the data lane of the connection it
// names: this session's own or a bound substream's. It returns false
// when the session must end.
func (s *session) queueData(d dataReq) bool {
	req, lane := d.req, s
	if id := pathOf(req); id != 0 {
		if lane = s.subs.get(id); lane == nil {
			s.sendError(req.Stream, proto.ErrArgInvalid, fmt.Sprintf("invalid path ID %d: no substream is bound with it", id))
			return true
		}
	}
	lane.laneQueued.Add(1)
	select {
	case lane.dataQ <- d:
		return true
	case <-lane.ctx.Done():
		if lane == s {
			return false
		}
		s.sendError(req.Stream, proto.ErrArgInvalid, fmt.Sprintf("path ID %d is not operational (the substream closed)", lane.pathID))
		return true
	case <-s.ctx.Done():
		return false
	}
}

// endSubstreams closes the session's substreams and waits until they
// have stopped using its files.
func (s *session) endSubstreams() {
	subs := s.subs.all()
	for _, sub := range subs {
		sub.close()
	}
	for _, sub := range subs {
		<-sub.done
	}
}

// bindInfo is what a substream takes over from its session: who the
// client is.
type bindInfo struct {
	identity *store.Identity
	authErr  error
	login    string
}

// authenticated ends the login (and authentication) of the session: its
// requests are served from now on, and substreams may bind to it. It is
// called before the answer that lets the client go on is sent, so a
// substream the client opens at once finds the session ready.
func (s *session) authenticated() {
	s.authNeeded = false
	s.bindMu.Lock()
	defer s.bindMu.Unlock()
	s.bindAs = &bindInfo{identity: s.identity, authErr: s.authErr, login: s.login}
}

// bindInfo returns what a substream takes over, nil if the session is not
// ready for substreams.
func (s *session) bindInfo() *bindInfo {
	s.bindMu.Lock()
	defer s.bindMu.Unlock()
	return s.bindAs
}
