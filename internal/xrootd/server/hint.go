package server

import (
	"sitebox/internal/xrootd/proto"
)

// willNeeder is a file that can start fetching ranges before they are
// read: a caching proxy's files. A readv's misses then travel upstream
// together, and those of readvs still queued for the data lane (several
// threads of one client share a connection) while earlier ones are
// served, instead of one after another.
type willNeeder interface {
	WillNeed(ranges [][2]int64) // offset, length; never waits
}

// readvList is a kXR_readv's segment list, parsed once (parseReadv).
type readvList struct {
	elems []proto.ReadListElem
	err   error // why the list itself is refused (answerReadv answers it)
	// byHandle groups the segments by file handle (offset, length
	// pairs), for the hint and the readiness check; nil for a list
	// answerReadv will refuse.
	byHandle map[[4]byte][][2]int64
}

// parseReadv parses req's segment list.
func (s *session) parseReadv(req *proto.Request) *readvList {
	elems, err := proto.ParseReadList(req.Data)
	rv := &readvList{elems: elems, err: err}
	if err != nil || len(elems) == 0 {
		return rv
	}
	maxSeg := int32(s.srv.cfg.MaxReadChunk - proto.ReadvElemLen)
	byHandle := map[[4]byte][][2]int64{}
	for _, e := range elems {
		if e.Len < 0 || e.Len > maxSeg || e.Offset < 0 {
			return rv
		}
		byHandle[e.Handle] = append(byHandle[e.Handle], [2]int64{e.Offset, int64(e.Len)})
	}
	rv.byHandle = byHandle
	return rv
}

// hintReadv tells the files a queued readv names which ranges it will
// read. It only starts fetches the session could start by reading: the
// handles are its own.
func (s *session) hintReadv(byHandle map[[4]byte][][2]int64) {
	for h, ranges := range byHandle {
		of, err := s.files.acquire(h)
		if err != nil {
			continue
		}
		if wn, ok := of.f.(willNeeder); ok && s.plainRefused("readv", of) == nil {
			wn.WillNeed(ranges)
		}
		of.release()
	}
}

// readyWaiter is a willNeeder that can tell when the ranges it was told
// of have arrived: Ready returns a channel closed then, or nil if they
// are there already.
type readyWaiter interface {
	Ready(ranges [][2]int64) <-chan struct{}
}

// parkReadv takes a readv whose data is still on its way (a cache
// fetching it) off the data lane until it has arrived, so the readvs
// behind it whose data is there are answered meanwhile instead of
// waiting their turn: several threads of one client share a connection,
// and each would otherwise wait for the slowest fetch ahead of it.
// XRootD answers carry the request's stream id, so the order of answers
// is free. It reports false, leaving the readv to the lane, when nothing
// is on its way or the session has as many parked as it may queue.
func (s *session) parkReadv(d dataReq) bool {
	return s.park(d, s.readvWaits(d.rv.byHandle))
}

// park parks d until waits have ended (parkReadv).
func (s *session) park(d dataReq, waits []<-chan struct{}) bool {
	if len(waits) == 0 {
		return false
	}
	select {
	case s.parked <- struct{}{}:
	default:
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.parked }()
		for _, w := range waits {
			select {
			case <-w:
			case <-s.ctx.Done():
				return
			}
		}
		s.readyQ <- d // room for every parked readv: never blocks
	}()
	return true
}

// readvWaits are the channels to wait on before the data of a readv's
// ranges (readvList.byHandle) is there.
func (s *session) readvWaits(byHandle map[[4]byte][][2]int64) []<-chan struct{} {
	var waits []<-chan struct{}
	for h, ranges := range byHandle {
		of, err := s.files.acquire(h)
		if err != nil {
			continue
		}
		if rw, ok := of.f.(readyWaiter); ok {
			if ch := rw.Ready(ranges); ch != nil {
				waits = append(waits, ch)
			}
		}
		of.release()
	}
	return waits
}
