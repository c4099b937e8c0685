// Package admin is the operator API of a running box: HTTP over a Unix
// socket in the state dir (<state_dir>/admin.sock, mode 0600), used by
// `sitebox cache …` and by anything else on the host that speaks HTTP.
// File permissions are the access control, so nothing here is exposed on
// the network.
//
// Endpoints:
//
//	GET  /metrics                  Prometheus text format
//	GET  /cache/stats              JSON cache.Stats
//	GET  /cache/ls[?prefix=/store&after=/store/x&limit=1000]
//	                               JSON []cache.EntryInfo, one page in path
//	                               order (default 1000); the next page
//	                               starts after the last path
//	POST /cache/evict?path=/x      JSON EvictResult
//	POST /federation/remove?name=N drop a (down) server from the director
//
// Errors are JSON {"error": "..."} with 400 (bad path), 404 (nothing cached,
// or no cache on this box), 409 (files open) or 500.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"sitebox/internal/metrics"
)

// Server serves the admin API. Its methods are safe for concurrent use.
type Server struct {
	log   *slog.Logger
	cache Cache // nil when the box runs no cache
	// registry is the director's, set by WithRegistry (nil: no director).
	registry Registry
	srv      *http.Server

	mu  sync.Mutex
	lns []net.Listener // from Listen; closed by Shutdown even if never served
}

// New returns a server exposing reg at /metrics and c under /cache/. c may
// be nil when the box runs no cache; the cache endpoints then answer 404.
func New(reg *prometheus.Registry, c Cache, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A nil *cache.Cache passed as Cache is a non-nil interface that would
	// panic on first use; treat it as "no cache".
	if v := reflect.ValueOf(c); c != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		c = nil
	}
	s := &Server{log: log.With("component", "admin"), cache: c}
	mux := http.NewServeMux()
	if reg != nil {
		mux.Handle("/metrics", metrics.Handler(reg, log))
	}
	mux.HandleFunc("GET /cache/stats", s.withCache(s.stats))
	mux.HandleFunc("GET /cache/ls", s.withCache(s.ls))
	mux.HandleFunc("POST /cache/evict", s.withCache(s.evict))
	mux.HandleFunc("POST /federation/remove", s.removeServer)
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the API's routes, for tests and for serving them on
// another listener.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Listen binds <stateDir>/admin.sock with mode 0600, creating stateDir if
// needed. A socket left by a box that is gone is replaced; if another
// process answers on it, the error wraps ErrRunning.
func (s *Server) Listen(stateDir string) (net.Listener, error) {
	ln, err := listenSocket(stateDir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	return ln, nil
}

// Serve answers requests on ln until Shutdown, and then returns nil.
func (s *Server) Serve(ln net.Listener) error {
	s.log.Info("serving admin API", "socket", ln.Addr().String())
	err := s.srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, waits for requests in progress until ctx ends,
// and closes (which removes) the sockets from Listen, served or not.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ln := range s.lns {
		ln.Close() // already closed if it was served
	}
	s.lns = nil
	return err
}
