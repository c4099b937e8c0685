// Package director is the redirector role: a registry of the servers that
// advertise to it (or are listed in its config), a locator that asks them
// which holds a path, and a store.Router whose answers are redirects — to
// a server at the client's site holding the file, to the site's cache for
// remote data, to a replica elsewhere, to the parent director, and last to
// the VO's federation.
package director

import (
	"context"
	"log/slog"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/fleet"
	"sitebox/internal/keptgo"
	"sitebox/internal/store"
)

// MaxHops stops redirect loops: a request that has been redirected this
// many times by directors is refused (XRootD clients give up at 16 too).
const MaxHops = 16

// hopsKey is the CGI key counting redirects by sitebox directors.
const hopsKey = "sbx.hops"

// Config configures a Director.
type Config struct {
	Name, Site    string
	LocateTimeout time.Duration // default 3 s
	// WaitAfter is how long a root:// request waits for a search before
	// being told to come back (kXR_wait); default 1 s.
	WaitAfter   time.Duration
	CacheTTL    time.Duration // default 60 s
	NegativeTTL time.Duration // default 10 s
	DropAfter   int           // missed ads before a server is dropped; default 3
	Parents     []store.Endpoint
	DefaultVO   string
	VO          map[string]store.Endpoint
	Static      []Ad // plain XRootD servers from the config
	// MembersFile is the members file `sitebox federation approve` writes
	// (re-read when it changes); Members are those of the config. Only
	// members' signed advertisements are accepted over HTTP.
	MembersFile string
	Members     []Member
	// MaxServers bounds the registry (default DefaultMaxServers).
	MaxServers int
	// DownWait is how long after a holder went down (or into downtime)
	// clients are told to wait for it before they get an error naming it
	// (default 30 s).
	DownWait time.Duration
	// StartupWait is how long a newly started director answers "wait"
	// instead of "not found" while its members have not all advertised
	// (zero: not at all; the box sets one advertisement interval).
	StartupWait time.Duration
}

// DefaultMaxServers bounds a registry: far above any real federation, far
// below what would strain the director.
const DefaultMaxServers = 10000

// Director answers every data request with where to go.
type Director struct {
	cfg    Config
	log    *slog.Logger
	reg    *registry
	sites  siteMap
	stats  stats
	matrix fleet.Matrix
	loc    *locator
	probe  prober
	// members may advertise; refusals logs refused ads at a bounded rate.
	members  *membership
	refusals refusalLog
	// started is when the director was built (see StartupWait).
	started time.Time
	// resolving is set while advertised host names are being resolved.
	resolving atomic.Bool
	// root is where clients reach this director's root:// (SetRoot).
	root atomic.Pointer[string]

	life context.Context // ends at Close
	stop context.CancelFunc
	done chan struct{} // closed when Run's background work has ended

	mu      sync.Mutex // orders Run's start against Close
	running bool
	closed  bool
}

var _ store.Store = (*Director)(nil)

// The director's defaults, written down once: Settings.Defaults fills
// the file's settings with them, New a Config that leaves them unset.
const (
	defaultLocateTimeout = 3 * time.Second
	defaultCacheTTL      = time.Minute
	defaultNegativeTTL   = 10 * time.Second
	defaultDropAfter     = 3
	defaultDownWait      = 30 * time.Second
	defaultStartupWait   = 10 * time.Second
)

// New builds a director; Run does its background work, Close stops it.
func New(cfg Config, log *slog.Logger) *Director {
	return newWithProber(cfg, newRootProber(), log)
}

func newWithProber(cfg Config, p prober, log *slog.Logger) *Director {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.LocateTimeout <= 0 {
		cfg.LocateTimeout = defaultLocateTimeout
	}
	if cfg.WaitAfter <= 0 {
		cfg.WaitAfter = time.Second
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = defaultCacheTTL
	}
	if cfg.NegativeTTL <= 0 {
		cfg.NegativeTTL = defaultNegativeTTL
	}
	if cfg.DropAfter <= 0 {
		cfg.DropAfter = defaultDropAfter
	}
	if cfg.MaxServers <= 0 {
		cfg.MaxServers = DefaultMaxServers
	}
	if cfg.DownWait <= 0 {
		cfg.DownWait = defaultDownWait
	}
	d := &Director{cfg: cfg, log: log, started: time.Now(), reg: newRegistry(cfg.DropAfter, cfg.MaxServers), probe: p, done: make(chan struct{}),
		members: newMembership(cfg.MembersFile, cfg.Members)}
	d.reloadMembers(time.Now())
	d.loc = &locator{probe: p, timeout: cfg.LocateTimeout, ttl: cfg.CacheTTL, negTTL: cfg.NegativeTTL, stats: &d.stats,
		onUnreachable: func(root string) {
			d.log.Warn("server unreachable; not sending clients there until it answers again", "root", root)
			d.reg.setDown(root, true, time.Now())
		},
		onReachable: func(root string) { d.reg.setDown(root, false, time.Now()) },
	}
	for _, s := range cfg.Static {
		d.reg.addStatic(Server{Ad: s})
	}
	d.life, d.stop = context.WithCancel(context.Background())
	// A search asks up to a thousand servers at once, each question
	// deep in the root:// client: kept goroutines keep their grown
	// stacks (growing them was a fifth of a search's CPU).
	d.loc.askers = keptgo.New(maxIdleAskers, askerIdleAfter)
	context.AfterFunc(d.life, d.loc.askers.Close)
	return d
}

func (d *Director) server(name string) (Server, bool) { return d.reg.get(name) }

// Remove drops a server from the registry, on an operator's word (a box
// that went down for good). It reports whether the director had it.
func (d *Director) Remove(name string) bool {
	ok := d.reg.remove(name)
	if ok {
		d.log.Info("server removed by the operator", "name", name)
	}
	return ok
}

// Servers lists the registry, for the federation view: the holdings
// filters by their summaries.
func (d *Director) Servers() []Server {
	out := d.reg.list(nil)
	for i := range out {
		out[i].Holdings = out[i].Holdings.summary()
	}
	return out
}

// AdvertisedServers is this director's registry as ads for its parent:
// its usable data servers and caches (directors below are flattened).
func (d *Director) AdvertisedServers() []Ad {
	now := time.Now()
	var out []Ad
	for _, s := range d.reg.list(func(s *Server) bool { return s.usable(now) && s.Role != RoleDirector }) {
		out = append(out, s.Ad)
	}
	return out
}

// maintain drops silent servers, probes static ones and sweeps old answers.
func (d *Director) maintain(ctx context.Context) {
	defer close(d.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	probeEvery := 10
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		d.reloadMembers(now)
		for _, name := range d.reg.expire(now) {
			d.log.Warn("server down: it stopped advertising; listed as down until it advertises again or an operator removes it", "name", name)
		}
		d.loc.sweep(now)
		if i%probeEvery == 0 {
			d.probeStatic(ctx)
		}
	}
}

// probeStatic checks the configured servers answer at all.
func (d *Director) probeStatic(ctx context.Context) {
	for _, s := range d.reg.list(func(s *Server) bool { return s.Static }) {
		pctx, cancel := context.WithTimeout(ctx, d.cfg.LocateTimeout)
		_, err := d.probe.Stat(pctx, s.Root, s.Prefixes[0])
		cancel()
		down := err != nil && !store.IsAnswer(err)
		if down != s.Down {
			d.log.Info("static server health changed", "name", s.Name, "down", down, "err", err)
		}
		d.reg.setDown(s.Root, down, time.Now())
	}
}

// pick returns the servers whose root endpoint is in roots.
func pick(servers []*Server, roots []string) []*Server {
	if len(roots) == 0 {
		return nil
	}
	in := make(map[string]bool, len(roots))
	for _, r := range roots {
		in[r] = true
	}
	return filter(servers, func(s *Server) bool { return in[s.Root] })
}

func filter(servers []*Server, keep func(*Server) bool) []*Server {
	var out []*Server
	for _, s := range servers {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

// best orders servers: not yet tried by the client first, then least
// loaded, then most free space, then by name so equal servers are chosen
// stably.
func best(servers []*Server, t tried) []*Server {
	out := append([]*Server(nil), servers...)
	if len(out) < 2 {
		return out
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ta, tb := t.hostTried(a.Root), t.hostTried(b.Root); ta != tb {
			return tb
		}
		if a.Load != b.Load {
			return a.Load < b.Load
		}
		if a.Free != b.Free {
			return a.Free > b.Free
		}
		return a.Name < b.Name
	})
	return out
}

// tried is XRootD's tried= CGI: hosts a client already failed at.
type tried map[string]bool

func triedSet(s string) tried {
	if s == "" {
		return nil // a client's first request: nothing to look up in
	}
	t := tried{}
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			t[h] = true
		}
	}
	return t
}

// has matches "host:port" exactly: that server failed the client.
func (t tried) has(root string) bool { return t[root] }

// hostOf is the host of a "host:port" endpoint, or "".
func hostOf(root string) string {
	host, _, err := net.SplitHostPort(root)
	if err != nil {
		return ""
	}
	return host
}

// hostTried matches a bare host, as XrdCl sends it. Several servers may
// share a host (one machine, or loopback), so for data servers this only
// makes a server the last choice (after a recheck) rather than excluding
// it; a cache on that host is skipped.
func (t tried) hostTried(root string) bool {
	host := hostOf(root)
	return host != "" && t[host]
}

// SetRoot records where clients reach this director's root:// listener
// (host:port), known once the box has bound it. Members learn it in the
// answer to their ads, to send root:// clients here while they restart.
func (d *Director) SetRoot(hostport string) { d.root.Store(&hostport) }

// Root is the address SetRoot recorded ("" before).
func (d *Director) Root() string {
	if r := d.root.Load(); r != nil {
		return *r
	}
	return ""
}
