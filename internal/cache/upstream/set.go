// Package upstream is how a cache reaches the servers it caches: the
// routes from namespace prefixes to servers in failover order, the
// streams (connections) of each server and which one a request goes to,
// the handles a cached file holds open there, and reads that fail over
// from one server to the next.
//
// A Set holds the routes and the state of their servers; Route asks a
// route's servers about a path (Stat, List, Checksum, Attrs); File is the
// upstream side of one cached file, whose reads (ReadAt, ReadV) go over
// its handles on every stream of the first server that answers.
package upstream

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
)

// Config is one remote server. Streams are independent clients of the
// same server (one connection each); a file's blocks are spread over
// them. PathPrefix is prepended to the path below the route's prefix
// (empty keeps the path as the client asked for it).
type Config struct {
	Name       string // for logs and errors, e.g. the URL
	PathPrefix string
	Streams    []store.Store
	// PassCGI appends the client's VO and the cache's mark to upstream
	// paths (root:// upstreams, which may be directors; see upCtx).
	PassCGI bool
}

// Options are what a Set needs besides its routes.
type Options struct {
	// FetchTimeout bounds one upstream read, and the dials of a
	// server's streams.
	FetchTimeout time.Duration
	// Files caps the files open at each server (see Trim).
	Files int
	// Trim is called when an open leaves server s with excess files open
	// over Files: it closes what it can (handles no one uses) and says
	// how many it closed. What is still over is logged, once a minute.
	Trim func(s *Server, excess int64) (closed int64)
	Log  *slog.Logger
}

// Set is a cache's routes and the state of their servers. Safe for
// concurrent use.
type Set struct {
	routes    *store.PrefixTable[*Route]
	opts      Options
	base      context.Context // ends when the cache closes: every read's deadline hangs from it
	connectCh chan *Server    // servers whose streams to dial (connect.go)
	bytes     atomic.Int64    // read from upstreams
	errors    atomic.Int64    // failed upstream operations (each failover counts)
}

// NewSet makes an empty set; base ends when its owner closes, which fails
// every read in flight.
func NewSet(base context.Context, opts Options) *Set {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Set{routes: &store.PrefixTable[*Route]{}, opts: opts, base: base, connectCh: make(chan *Server, 4)}
}

// Add routes prefix to servers, tried in order. The longest prefix wins,
// so /store/user is served by its own servers rather than those of
// /store.
func (s *Set) Add(prefix string, servers []Config) {
	r := &Route{set: s, prefix: prefix}
	for _, c := range servers {
		r.servers = append(r.servers, &Server{Config: c, busy: make([]int, len(c.Streams))})
	}
	s.routes.Add(prefix, r)
}

// Route is the route serving p, or nil.
func (s *Set) Route(p string) *Route {
	r, _ := s.routes.Lookup(p)
	return r
}

// Prefixes lists the routes' prefixes.
func (s *Set) Prefixes() []string { return s.routes.Prefixes() }

// Bytes is how many bytes were read from upstreams.
func (s *Set) Bytes() int64 { return s.bytes.Load() }

// Errors counts the failed upstream operations.
func (s *Set) Errors() int64 { return s.errors.Load() }

// Close closes the servers' clients.
func (s *Set) Close() {
	for _, r := range s.routes.All() {
		for _, u := range r.servers {
			for _, st := range u.Streams {
				if cl, ok := st.(io.Closer); ok {
					cl.Close()
				}
			}
		}
	}
}

// Server is one server of a route, with the load of its streams and the
// files open there.
type Server struct {
	Config
	mu   sync.Mutex
	busy []int // requests in flight per stream
	next int   // where the search for the least busy stream starts

	open   atomic.Int64 // files open, over all streams
	warned atomic.Int64 // when the cap was last reported (unix ns)

	connecting  atomic.Bool  // the connector has it queued or dialing
	connectedAt atomic.Int64 // when the connector last dialed its streams (unix ns)
	// connectFailed says a dial of that round failed: the next round
	// waits connectRetry.
	connectFailed atomic.Bool
}

// OpenFiles is how many files are open at s, over all its streams.
func (s *Server) OpenFiles() int64 { return s.open.Load() }

// take returns the stream of s where a request costs least, and counts
// the request on it: cost(si) is what the stream adds beyond the
// requests in flight there (see File.streamCost). Of equals, the one
// adding least (the file open there already), then round-robin, so a
// burst of fetches spreads over every stream (a server answers one read
// per connection at a time).
func (s *Server) take(cost func(si int) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, least, added := -1, 0, 0
	for k := range s.busy {
		i := (s.next + k) % len(s.busy)
		a := cost(i)
		if c := s.busy[i] + a; best < 0 || c < least || c == least && a < added {
			best, least, added = i, c, a
		}
	}
	s.busy[best]++
	s.next = best + 1
	return best
}

// done ends a request take counted on stream si.
func (s *Server) done(si int) {
	s.mu.Lock()
	s.busy[si]--
	s.mu.Unlock()
}

// upCtx is ctx for a call to server u, carrying the request the cache
// makes there when u takes CGI (root://): the client's VO (a director
// there picks the VO's federation by it) and a mark that a cache is
// asking, so a director never sends the request back to a cache — its
// own, or another — round a loop.
func upCtx(ctx context.Context, u *Server, vo string) context.Context {
	if !u.PassCGI {
		return ctx
	}
	q := url.Values{store.ViaKey: {store.ViaCache}}
	if vo != "" {
		q.Set("vo", vo)
	}
	return store.WithUpstream(ctx, &store.Request{Opaque: q, VO: vo})
}

// overCap warns, once a minute at most, that clients hold more files of
// u than its cap.
func (s *Set) overCap(u *Server) {
	now := time.Now().UnixNano()
	last := u.warned.Load()
	if now-last < int64(time.Minute) || !u.warned.CompareAndSwap(last, now) {
		return
	}
	s.opts.Log.Warn("clients hold more upstream files open than cache.upstream_files allows; none is idle to close",
		"upstream", u.Name, "open", u.open.Load(), "upstream_files", s.opts.Files)
}

// trim keeps u within its cap of open files (see Options.Trim); within
// it, it costs one atomic load, so it runs after every open.
func (s *Set) trim(u *Server) {
	excess := u.open.Load() - int64(s.opts.Files)
	if excess <= 0 {
		return
	}
	if s.opts.Trim != nil {
		excess -= s.opts.Trim(u, excess)
	}
	if excess > 0 {
		s.overCap(u)
	}
}

// Route is a cached prefix and its servers in failover order.
type Route struct {
	set     *Set
	prefix  string
	servers []*Server
}

// Servers are the route's servers, in failover order.
func (r *Route) Servers() []*Server { return r.servers }

// upPath is the name of p at server u.
func (r *Route) upPath(u *Server, p string) string {
	if u.PathPrefix == "" {
		return p
	}
	rest := strings.TrimPrefix(p, r.prefix)
	if r.prefix == "/" {
		rest = p
	}
	if rest == "" {
		return u.PathPrefix
	}
	return strings.TrimSuffix(u.PathPrefix, "/") + rest
}
