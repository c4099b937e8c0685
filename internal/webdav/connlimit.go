package webdav

import (
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/clientnet"
)

// ConnLimiter bounds the connections one client address and one client
// network (IPv4 /24, IPv6 /64) may hold open at once, so a single host or
// a network's worth of them cannot take the server's descriptors. A
// connection past a limit is closed at once, before any TLS handshake —
// unless a connection counted under that limit is idle between requests
// (a keep-alive its client holds for later, which it reopens when it
// needs it): the one idle longest is closed instead and the newcomer let
// in. Refusals are logged once per client and minute. Safe for
// concurrent use.
type ConnLimiter struct {
	perClient, perNetwork int // 0: no limit
	log                   *slog.Logger

	mu        sync.Mutex
	byAddress map[string]int
	byNetwork map[string]int
	idle      map[*countedConn]time.Time // idle between requests, since
	logged    map[string]time.Time       // address → last refusal logged
}

// NewConnLimiter bounds the connections per address and per network
// (zero or negative: no limit).
func NewConnLimiter(perClient, perNetwork int, log *slog.Logger) *ConnLimiter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ConnLimiter{perClient: max(perClient, 0), perNetwork: max(perNetwork, 0), log: log,
		byAddress: map[string]int{}, byNetwork: map[string]int{}, idle: map[*countedConn]time.Time{}, logged: map[string]time.Time{}}
}

// LimitListener is NewConnLimiter(perClient, 0, log).Listener(ln).
func LimitListener(ln net.Listener, perClient int, log *slog.Logger) net.Listener {
	return NewConnLimiter(perClient, 0, log).Listener(ln)
}

// Listener returns ln with the limits applied to what it accepts.
func (l *ConnLimiter) Listener(ln net.Listener) net.Listener {
	if l.perClient == 0 && l.perNetwork == 0 {
		return ln
	}
	return &limitListener{Listener: ln, l: l}
}

// ConnState is for http.Server.ConnState: it tells the limiter which
// connections are idle between requests.
func (l *ConnLimiter) ConnState(c net.Conn, st http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	cc, ok := c.(*countedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle && !cc.released.Load() {
		l.idle[cc] = time.Now()
		cc.idle.Store(true)
	} else {
		l.busy(cc)
	}
}

// busy notes that cc is no longer idle. l.mu is held.
func (l *ConnLimiter) busy(cc *countedConn) {
	cc.idle.Store(false)
	delete(l.idle, cc)
}

type limitListener struct {
	net.Listener
	l *ConnLimiter
}

func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		cc := &countedConn{Conn: c, l: ll.l, host: remoteHost(c)}
		if ll.l.admit(cc.host) {
			return cc, nil
		}
		c.Close()
	}
}

// admit counts a connection from host, closing idle ones in the way, and
// reports whether it may stay.
func (l *ConnLimiter) admit(host string) bool {
	network := clientnet.Of(host)
	var victims []*countedConn
	defer func() {
		for _, v := range victims { // outside the lock: Close may block
			v.Conn.Close()
		}
	}()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		full, limit := l.full(host, network)
		if !full {
			l.byAddress[host]++
			l.byNetwork[network]++
			return true
		}
		v := l.oldestIdle(func(c *countedConn) bool {
			return c.host == host || limit == "network" && clientnet.Of(c.host) == network
		})
		if v == nil {
			l.refused(host, network, limit)
			return false
		}
		v.released.Store(true)
		l.busy(v)
		l.releaseLocked(v.host)
		victims = append(victims, v)
	}
}

// full says whether host (of network) is at a limit, and which: "client"
// or "network".
func (l *ConnLimiter) full(host, network string) (bool, string) {
	switch {
	case l.perClient > 0 && l.byAddress[host] >= l.perClient:
		return true, "client"
	case l.perNetwork > 0 && l.byNetwork[network] >= l.perNetwork:
		return true, "network"
	}
	return false, ""
}

// oldestIdle is the connection idle longest among those in, nil if none.
func (l *ConnLimiter) oldestIdle(in func(*countedConn) bool) *countedConn {
	var oldest *countedConn
	var since time.Time
	for c, t := range l.idle {
		if in(c) && (oldest == nil || t.Before(since)) {
			oldest, since = c, t
		}
	}
	return oldest
}

func (l *ConnLimiter) refused(host, network, limit string) {
	now := time.Now()
	if now.Sub(l.logged[host]) < time.Minute {
		return
	}
	if len(l.logged) > 4096 {
		clear(l.logged) // a flood from many addresses: start over
	}
	l.logged[host] = now
	if limit == "network" {
		l.log.Warn("too many connections from one client network; refusing", "client", host, "network", network, "limit", l.perNetwork)
		return
	}
	l.log.Warn("too many connections from one client; refusing", "client", host, "limit", l.perClient)
}

func (l *ConnLimiter) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.releaseLocked(host)
}

func (l *ConnLimiter) releaseLocked(host string) {
	if l.byAddress[host]--; l.byAddress[host] <= 0 {
		delete(l.byAddress, host)
	}
	network := clientnet.Of(host)
	if l.byNetwork[network]--; l.byNetwork[network] <= 0 {
		delete(l.byNetwork, network)
	}
}

func remoteHost(c net.Conn) string {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String()
	}
	return host
}

// countedConn gives its place back once, on the first Close or when the
// limiter closes it to make room.
type countedConn struct {
	net.Conn
	l        *ConnLimiter
	host     string
	released atomic.Bool
	// idle is set while the server waits for the next request and nothing
	// of it has come: http.Server reports a keep-alive connection active
	// only once a request's headers are in.
	idle atomic.Bool
}

func (c *countedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.idle.Load() {
		c.l.mu.Lock()
		c.l.busy(c)
		c.l.mu.Unlock()
	}
	return n, err
}

func (c *countedConn) Close() error {
	if c.released.CompareAndSwap(false, true) {
		c.l.release(c.host)
		c.l.ConnState(c, http.StateClosed)
	}
	return c.Conn.Close()
}
