package interop

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// relay is a TCP relay on 127.0.0.1 between the cache and an origin. It
// counts the bytes the origin sends (what a WAN link would carry to the
// cache), can throttle them, and can cut every connection at once.
type relay struct {
	addr   string // 127.0.0.1:PORT to give the cache as its upstream
	target string
	ln     net.Listener
	down   atomic.Int64 // origin → cache
	rate   atomic.Int64 // bytes per second origin → cache; 0 = unlimited
	active atomic.Int64 // copying goroutines still running

	mu    sync.Mutex
	next  time.Time // pacing: when the next byte may go
	conns map[net.Conn]struct{}
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	go r.serve()
	t.Cleanup(func() { ln.Close(); r.cut() })
	return r
}

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		o, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns[c], r.conns[o] = struct{}{}, struct{}{}
		r.mu.Unlock()
		r.active.Add(2)
		go r.pipe(c, o, nil)
		go r.pipe(o, c, &r.down)
	}
}

// pipe copies src to dst, counting into n (if set) each chunk before it is
// forwarded, and closes both ends when either side is done.
func (r *relay) pipe(src, dst net.Conn, n *atomic.Int64) {
	defer func() {
		r.active.Add(-1)
		src.Close()
		dst.Close()
		r.mu.Lock()
		delete(r.conns, src)
		delete(r.conns, dst)
		r.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if n != nil {
				r.pace(k)
				n.Add(int64(k))
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a cut: either way the pair is done
			return
		}
	}
}

// pace sleeps so that the origin's bytes, over all connections, flow at
// no more than the configured rate.
func (r *relay) pace(n int) {
	rate := r.rate.Load()
	if rate <= 0 {
		return
	}
	r.mu.Lock()
	now := time.Now()
	if r.next.Before(now) {
		r.next = now
	}
	r.next = r.next.Add(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	wait := r.next.Sub(now)
	r.mu.Unlock()
	time.Sleep(wait)
}

// reset returns the origin's byte count so far and starts a new one.
func (r *relay) reset() int64 { return r.down.Swap(0) }

// idle reports whether every connection is done with (all bytes in
// flight to a killed client have been counted).
func (r *relay) idle() bool { return r.active.Load() == 0 }

// cut closes every open connection (new ones are still accepted).
func (r *relay) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
}
