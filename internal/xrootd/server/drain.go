package server

import (
	"context"
	"time"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// A graceful stop (Shutdown with time to spare) drains: the listener is
// closed, running transfers go on until their files are closed, and every
// request that would start something new is sent elsewhere — kXR_redirect
// to Config.DrainRedirect (the director the box belongs to), else kXR_wait for
// DrainWait, by which time the restarted server is listening again. A
// session that holds nothing is closed at once; what is still open when
// the context ends is cut.

// defaultDrainWait is the kXR_wait a draining server answers new requests
// with when it has nowhere to redirect them: long enough for a restart.
const defaultDrainWait = 3 * time.Second

// drainPoll is how often a draining server looks for sessions that have
// become idle.
const drainPoll = 50 * time.Millisecond

// startsNew lists the requests that start new work on a path, which a
// draining server sends elsewhere; requests on open files (read, write,
// sync, close, …) are served to the end.
var startsNew = map[uint16]bool{
	proto.ReqOpen: true, proto.ReqStat: true, proto.ReqStatx: true, proto.ReqDirlist: true,
	proto.ReqLocate: true, proto.ReqMkdir: true, proto.ReqRm: true, proto.ReqRmdir: true,
	proto.ReqMv: true, proto.ReqChmod: true, proto.ReqPrepare: true, proto.ReqFattr: true,
}

// divertDraining answers req with a redirect or a wait if the server is
// draining and req starts new work; it reports whether it did.
func (s *session) divertDraining(req *proto.Request) bool {
	if !s.srv.draining.Load() || !startsNew[req.ID] {
		return false
	}
	if req.ID == proto.ReqStat && s.files.count() > 0 && len(req.Data) == 0 {
		return false // stat of an open file (by handle)
	}
	if req.ID == proto.ReqFattr && (len(req.Data) == 0 || req.Data[0] == 0) {
		return false // attributes of an open file (by handle)
	}
	c := store.Call{Op: "drain", Path: "/"}
	rt := store.Route{Retry: true, Wait: s.srv.cfg.DrainWait, Reason: "server restarting; come back in a few seconds"}
	if to := s.srv.drainTo.Load(); to != nil && *to != "" {
		rt = store.Route{To: []store.Endpoint{{Root: *to}}, Reason: "server restarting; ask the director"}
	}
	status, body := uint16(proto.StatusWait), waitBody(rt, c)
	if !rt.Retry {
		if b, err := redirectBody(rt, c); err == nil {
			status, body = proto.StatusRedirect, b
		}
	}
	s.log.Debug("draining: request diverted", "req", req.Name(), "status", status)
	s.sendFrame(req.Stream, status, body)
	return true
}

// idle reports whether the session holds nothing: no open file and no
// request executing.
func (s *session) idle() bool { return s.files.count() == 0 && s.quiet() }

// quiet reports whether the session has no request executing or waiting
// to be served.
func (s *session) quiet() bool {
	return len(s.slots) == 0 && len(s.dataQ) == 0 && len(s.parked) == 0 && len(s.readyQ) == 0 && s.serving.Load() == 0
}

// drain closes sessions as they become idle until none is left (true) or
// ctx ends (false).
func (s *Server) drain(ctx context.Context) bool {
	t := time.NewTicker(drainPoll)
	defer t.Stop()
	for {
		s.mu.Lock()
		for sess := range s.sessions {
			if sess.idle() {
				sess.close()
			}
		}
		left := len(s.sessions)
		s.mu.Unlock()
		if left == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
