package server

import (
	"fmt"
	"net"
	"testing"
)

// BenchmarkReclaim is the cost of the search an accept past the server's
// session limit makes among 4096 sessions: all busy (a whole scan, then
// none for idleRecheck; here every time), or all idle (a sample).
func BenchmarkReclaim(b *testing.B) {
	for _, busy := range []bool{true, false} {
		b.Run(fmt.Sprintf("busy=%v", busy), func(b *testing.B) {
			st, _ := newOriginExport(b, b.TempDir(), true)
			srv := New(Config{}, st, nil)
			for i := range 4096 {
				c1, c2 := net.Pipe()
				b.Cleanup(func() { c1.Close(); c2.Close() })
				sess := newSession(srv, c1)
				if busy {
					sess.slots <- struct{}{} // a request in flight
				}
				sess.clientIP, sess.network = fmt.Sprintf("10.0.%d.%d", i/256, i%256), fmt.Sprintf("10.0.%d.0/24", i/256)
				srv.sessions[sess] = struct{}{}
			}
			limit := &limitError{whatSessions, onServer, 4096}
			b.ResetTimer()
			for range b.N {
				srv.mu.Lock()
				clear(srv.noVictimBefore)
				victim, _, _, _ := srv.pickVictim(limit, "192.0.2.1", srv.started)
				srv.mu.Unlock()
				if (victim == nil) != busy {
					b.Fatalf("victim %v among sessions busy=%v", victim, busy)
				}
			}
		})
	}
}
