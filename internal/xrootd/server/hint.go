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

// hintReadv tells the files a queued readv names which ranges it will
// read. It only starts fetches the session could start by reading: the
// handles are its own, and a malformed list is left for doReadv to
// refuse with its error.
func (s *session) hintReadv(req *proto.Request) {
	elems, err := proto.ParseReadList(req.Data)
	if err != nil || len(elems) == 0 {
		return
	}
	maxSeg := int32(s.srv.cfg.MaxReadChunk - proto.ReadvElemLen)
	byHandle := map[[4]byte][][2]int64{}
	for _, e := range elems {
		if e.Len <= 0 || e.Len > maxSeg || e.Offset < 0 {
			return
		}
		byHandle[e.Handle] = append(byHandle[e.Handle], [2]int64{e.Offset, int64(e.Len)})
	}
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
