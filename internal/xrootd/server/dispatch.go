package server

import (
	"fmt"

	"sitebox/internal/xrootd/proto"
)

// handler serves one request; a returned error is sent as kXR_error.
type handler func(s *session, req *proto.Request) error

// dataHandlers are the requests that answer with file data. They run one
// after another in arrival order on the session's data lane, as XRootD
// serves them: a client keeping several chunk reads in flight gets its
// chunks in order, and one big answer streams out at a time.
var dataHandlers = map[uint16]handler{
	proto.ReqRead:   (*session).doRead,
	proto.ReqReadv:  (*session).doReadv,
	proto.ReqPgread: (*session).doPgread,
}

// handlers lists the other requests; they run concurrently.
var handlers = map[uint16]handler{
	proto.ReqOpen:     (*session).doOpen,
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
	proto.ReqSet:      (*session).doSet,
	proto.ReqFattr:    (*session).doFattr,
}

// dispatch runs one request; it returns false when the session must end.
// Session-level requests run inline so their effects are ordered; data
// requests queue for the data lane; the rest run concurrently, at most
// MaxInFlight at a time. When the lane's queue or the slots are full the
// reader waits, which pushes back on the client through TCP.
func (s *session) dispatch(req *proto.Request) bool {
	if s.sessionRequest(req) {
		return true
	}
	_, data := dataHandlers[req.ID]
	h, ok := handlers[req.ID]
	if !ok && !data {
		s.sendError(req.Stream, proto.ErrInvalidRequest, fmt.Sprintf("request %d (%s) is not supported by this server", req.ID, req.Name()))
		return true
	}
	if !s.loggedIn {
		s.sendError(req.Stream, proto.ErrNotAuthorized, "log in before "+req.Name())
		return true
	}
	if s.authNeeded {
		s.sendError(req.Stream, proto.ErrNotAuthorized, "authenticate (kXR_auth) before "+req.Name())
		return true
	}
	if s.divertDraining(req) {
		return true
	}
	if data {
		d := dataReq{req: req}
		if req.ID == proto.ReqReadv {
			d.rv = s.parseReadv(req)
			s.hintReadv(d.rv.byHandle)
			if pathOf(req) == 0 && s.serveInline(d) {
				return true
			}
		}
		return s.queueData(d) // bind.go: this connection or a substream
	}
	select {
	case s.slots <- struct{}{}:
	case <-s.ctx.Done():
		return false
	}
	prev, done := s.orderNamespace(req)
	s.wg.Add(1)
	s.srv.workers.Go(func() {
		defer func() {
			if done != nil {
				close(done)
			}
			<-s.slots
			s.wg.Done()
		}()
		if prev != nil {
			select {
			case <-prev:
			case <-s.ctx.Done():
				return
			}
		}
		s.serve(h, req)
	})
	return true
}

// namespaceChanges run in the order the client sent them, as xrootd,
// which serves one request of a connection at a time, does: fsspec's
// recursive rm sends "rm dir/sub" then "rm dir" without waiting between
// them and relies on that order.
var namespaceChanges = map[uint16]bool{
	proto.ReqMkdir: true, proto.ReqRm: true, proto.ReqRmdir: true,
	proto.ReqMv: true, proto.ReqChmod: true, proto.ReqTruncate: true,
}

// orderNamespace chains req behind the session's previous namespace
// change: it returns what req must wait for and what it closes when done
// (both nil for other requests). Called by the reader only.
func (s *session) orderNamespace(req *proto.Request) (prev <-chan struct{}, done chan struct{}) {
	if !namespaceChanges[req.ID] {
		return nil, nil
	}
	prev, done = s.nsTail, make(chan struct{})
	s.nsTail = done
	return prev, done
}

// dataLane serves the data requests the reader queued, in order, and
// the parked readvs whose data arrived, until the session ends. It holds
// laneMu while serving, so one answer streams out at a time whether the
// lane or the reader (serveInline) serves it.
func (s *session) dataLane() {
	defer s.wg.Done()
	for {
		select {
		case d := <-s.readyQ:
			s.laneMu.Lock()
			s.serveData(d)
			s.laneMu.Unlock()
		case d := <-s.dataQ:
			s.laneMu.Lock()
			if d.rv == nil || !s.parkReadv(d) {
				s.serveData(d)
			}
			s.laneMu.Unlock()
			s.laneQueued.Add(-1)
		case <-s.ctx.Done():
			return
		}
	}
}

// serveInline serves a vector read on the reader goroutine when the lane
// has nothing queued and is not serving, and the read's data is there:
// answered from disk or page cache, it then costs no hand-over between
// goroutines, each of which readies a goroutine and wakes an idle core to
// run it (the lane made 2.5 context switches per 16 × 32 KiB vector read
// where xrootd, serving a connection's requests on one thread, makes 0.3).
// The reader reads the next request once the answer is written, as
// xrootd does; what the client sent meanwhile waits in the socket. A
// vector read whose data a cache is still fetching is parked until it
// arrives, as the lane parks it (or left to the lane when the session
// has as many parked as it may), so the reader stays free to read and
// hint the requests behind it.
func (s *session) serveInline(d dataReq) bool {
	if s.laneQueued.Load() != 0 || !s.laneMu.TryLock() {
		return false
	}
	defer s.laneMu.Unlock()
	if waits := s.readvWaits(d.rv.byHandle); len(waits) != 0 {
		return s.park(d, waits) // or the lane serves it when it may not
	}
	s.serveData(d)
	return true
}

// dataReq is a request for the data lane; a readv's comes with its
// segment list, parsed once by the reader when the request arrived: the
// hint, the readiness checks and the answer all use it.
type dataReq struct {
	req *proto.Request
	rv  *readvList // a readv's; nil for the other data requests
}

// serveData serves a data request, a readv from its parsed list.
func (s *session) serveData(d dataReq) {
	if d.rv == nil {
		s.serve(dataHandlers[d.req.ID], d.req)
		return
	}
	s.serve(func(s *session, req *proto.Request) error { return s.answerReadv(req, d.rv) }, d.req)
}

// serve runs one handler, answering its error and containing its panic.
func (s *session) serve(h handler, req *proto.Request) {
	s.serving.Add(1)
	defer func() {
		s.touch()
		s.serving.Add(-1)
	}()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("request panicked", "req", req.Name(), "panic", r)
			s.sendError(req.Stream, proto.ErrServerError, "internal error serving "+req.Name())
		}
	}()
	if err := h(s, req); err != nil {
		s.replyErr(req, err)
	}
}
