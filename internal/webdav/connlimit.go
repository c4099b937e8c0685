package webdav

import (
	"log/slog"
	"net"
	"sync"
	"time"
)

// LimitListener bounds the connections one client address may hold open
// at once (perClient; zero or negative: no limit). A connection past the
// limit is closed at once, before any TLS handshake, so a single host
// cannot take the server's descriptors; refusals are logged once per
// client and minute. The returned listener is safe for concurrent use.
func LimitListener(ln net.Listener, perClient int, log *slog.Logger) net.Listener {
	if perClient <= 0 {
		return ln
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &limitListener{Listener: ln, max: perClient, log: log, open: map[string]int{}, logged: map[string]time.Time{}}
}

type limitListener struct {
	net.Listener
	max int
	log *slog.Logger

	mu     sync.Mutex
	open   map[string]int       // address → open connections
	logged map[string]time.Time // address → last refusal logged
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c)
		if l.admit(host) {
			return &countedConn{Conn: c, release: func() { l.release(host) }}, nil
		}
		c.Close()
	}
}

func (l *limitListener) admit(host string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host] < l.max {
		l.open[host]++
		return true
	}
	now := time.Now()
	if now.Sub(l.logged[host]) >= time.Minute {
		if len(l.logged) > 4096 {
			clear(l.logged) // a flood from many addresses: start over
		}
		l.logged[host] = now
		l.log.Warn("too many connections from one client; refusing", "client", host, "limit", l.max)
	}
	return false
}

func (l *limitListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
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

// countedConn gives its place back once, on the first Close.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
