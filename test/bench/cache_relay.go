package bench

import (
	"net"
	"sync"
	"sync/atomic"
)

// Relay is a TCP relay on 127.0.0.1 that counts the bytes its target sends
// back. Between a cache and its upstream link it measures what the WAN
// carried, the same way for every cache under test, whatever each reports
// about itself. Safe for concurrent use.
type Relay struct {
	Addr   string // 127.0.0.1:PORT to use as the upstream
	target string
	ln     net.Listener
	down   atomic.Int64 // target → client

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartRelay listens on a free 127.0.0.1 port and relays to target.
func StartRelay(target string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

// Down returns the bytes received from the target so far.
func (r *Relay) Down() int64 { return r.down.Load() }

// Close stops accepting, closes every relayed connection and waits for the
// relay's goroutines.
func (r *Relay) Close() error {
	err := r.ln.Close()
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

func (r *Relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go r.relay(c)
	}
}

// track registers connections for Close; false once the relay is closed.
func (r *Relay) track(cs ...net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	for _, c := range cs {
		r.conns[c] = struct{}{}
	}
	return true
}

func (r *Relay) relay(c net.Conn) {
	defer r.wg.Done()
	o, err := net.Dial("tcp", r.target)
	if err != nil {
		c.Close()
		return
	}
	if !r.track(c, o) {
		c.Close()
		o.Close()
		return
	}
	done := make(chan struct{})
	go func() { pipe(o, c, nil); close(done) }()
	pipe(c, o, &r.down)
	<-done
	r.mu.Lock()
	delete(r.conns, c)
	delete(r.conns, o)
	r.mu.Unlock()
}

// pipe copies src to dst, counting into n (if set) each read as it
// arrives, so a count taken while a cache holds its upstream connection
// open misses nothing already received, then closes both ends so the other
// direction ends too.
func pipe(dst, src net.Conn, n *atomic.Int64) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 256<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if n != nil {
				n.Add(int64(k))
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
