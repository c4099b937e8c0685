// Package server is sitebox's own implementation of the XRootD protocol
// (root://) over a store.Store. XRootD 5.5 clients — xrdcp, xrdfs, the
// Python bindings, uproot — work against it unchanged.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"sitebox/internal/store"
)

// Config tunes the server. The zero value is valid.
type Config struct {
	// MaxReadChunk is the largest response frame of a read; bigger reads go
	// out as kXR_oksofar chunks (default 2 MiB, as XRootD).
	MaxReadChunk int
	// MaxRequestData caps a request's payload (default 16 MiB + 64 KiB, room
	// for xrdcp's 8 MiB and pgwrite's 16 MiB + CRCs). Bigger frames close
	// the connection: it cannot be resynchronised.
	MaxRequestData int
	// MaxInFlight bounds requests executing at once per connection
	// (default 64); further requests wait, so one client cannot exhaust
	// the server.
	MaxInFlight int
	// ReadOnly refuses every change even where the store allows it.
	ReadOnly bool
	// AdvertisePgRW announces pgread/pgwrite support, so xrdcp checks a
	// CRC32C per 4 KiB page end to end. Off by default: plain reads can go
	// out with sendfile(2); pgread and pgwrite are served either way.
	AdvertisePgRW bool
	// TLS is reserved for roots:// (not yet served).
	TLS *tls.Config
	// ServerName is reported by query config.
	ServerName string
	// Site is reported by query config (sitename).
	Site string
	// WriteTimeout bounds one response write to a stalled client
	// (default 2 minutes).
	WriteTimeout time.Duration
}

func (c *Config) defaults() {
	if c.MaxReadChunk <= 0 {
		c.MaxReadChunk = 2 << 20
	}
	if c.MaxRequestData <= 0 {
		c.MaxRequestData = 16<<20 + 64<<10
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 64
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 2 * time.Minute
	}
	if c.ServerName == "" {
		c.ServerName = "sitebox"
	}
}

// Server serves the XRootD protocol. Safe for concurrent use.
type Server struct {
	cfg   Config
	store store.Store
	log   *slog.Logger
	bufs  sync.Pool // []byte of cfg.MaxReadChunk

	mu       sync.Mutex
	ln       net.Listener
	sessions map[*session]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// New returns a server for st. log may be nil.
func New(cfg Config, st store.Store, log *slog.Logger) *Server {
	cfg.defaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, store: st, log: log, sessions: map[*session]struct{}{}}
	s.bufs.New = func() any { b := make([]byte, cfg.MaxReadChunk); return &b }
	return s
}

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = errors.New("xrootd server closed")

// Serve accepts connections on ln until Shutdown; it returns nil then.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.ln = ln
	s.mu.Unlock()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		sess := newSession(s, c)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return nil
		}
		s.sessions[sess] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			sess.run()
			s.mu.Lock()
			delete(s.sessions, sess)
			s.mu.Unlock()
		}()
	}
}

// Shutdown stops accepting, closes every connection and waits for the
// sessions to finish, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for sess := range s.sessions {
		sess.close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) getBuf() *[]byte  { return s.bufs.Get().(*[]byte) }
func (s *Server) putBuf(b *[]byte) { s.bufs.Put(b) }
