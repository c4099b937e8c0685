package server

import (
	"time"

	"sitebox/internal/nbio"
)

// The session's connection: reading it with a deadline on progress,
// noting activity, and closing it, which any part of the session may do.

// timedReader reads the session's connection, giving every read of the
// socket a deadline of readWait from now (lazyDeadline): a deadline on
// progress, so a large write payload may take as long as it keeps
// coming, while a client that stops in the middle of a request is cut
// off.
type timedReader struct{ s *session }

func (r timedReader) Read(p []byte) (int, error) {
	if d := r.s.readWait; d > 0 {
		r.s.readDL.within(d)
	}
	if r.s.plain != nil && r.s.conn == r.s.raw {
		return nbio.Read(r.s.plain, p)
	}
	return r.s.conn.Read(p)
}

// close ends the session: the socket is closed so blocked reads and writes
// return, and waiting requests see ctx end. Safe to call many times.
func (s *session) close() {
	s.cancel()
	s.raw.Close()
}

// touch notes that a request arrived or ended now.
func (s *session) touch() { s.active.Store(time.Now().UnixNano()) }

// lastActive is when a request last arrived or ended.
func (s *session) lastActive() time.Time { return time.Unix(0, s.active.Load()) }
