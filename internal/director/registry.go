package director

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/fleet"
	"sitebox/internal/store"
)

// Roles a server plays in the federation.
const (
	RoleOrigin   = "origin"
	RoleCache    = "cache"
	RoleDirector = "director"
)

// Ad is what a server advertises to its directors, over HTTPS as JSON.
// A director advertises its own registry in Servers, so its parent learns
// every data server below it (and redirects clients straight there).
type Ad struct {
	Name     string   `json:"name"`
	Site     string   `json:"site"`
	Role     string   `json:"role"`
	Root     string   `json:"root,omitempty"`  // host:port
	HTTPS    string   `json:"https,omitempty"` // https://host:port
	Prefixes []string `json:"prefixes"`
	Free     int64    `json:"free"`  // bytes free in its storage (0 unknown)
	Total    int64    `json:"total"` // bytes
	Load     float64  `json:"load"`  // 1-minute load average per CPU
	Version  string   `json:"version"`
	Interval float64  `json:"interval"` // seconds until the next ad
	Servers  []Ad     `json:"servers,omitempty"`
	// ConfigDigest identifies the box's configuration, so an operator sees
	// which boxes run the same one.
	ConfigDigest string `json:"config_digest,omitempty"`
	// Health is the box's own word on itself: "ok", or what is wrong
	// (a failing cache disk, …).
	Health string `json:"health,omitempty"`
	// Downtime is planned work: clients are routed around the box while
	// it lasts, and the fleet view says so instead of showing a failure.
	Downtime *fleet.Downtime `json:"downtime,omitempty"`
	// Probes are the box's recent throughput probes to other boxes, for
	// the site-to-site matrix (`sitebox bench matrix`).
	Probes []fleet.ProbeResult `json:"probes,omitempty"`
	// Holdings is an origin's summary of the names it holds, which lets
	// a director ask it first for those (holdings.go).
	Holdings *Holdings `json:"holdings,omitempty"`
}

// Server is one entry of the registry.
type Server struct {
	Ad
	Static bool   `json:"static"`        // from the config; probed, not advertised
	Via    string `json:"via,omitempty"` // the child director it was learned from
	// Member is the federation member whose advertisement set the entry
	// (the child director's, for a child).
	Member   string    `json:"member,omitempty"`
	LastSeen time.Time `json:"last_seen"`
	Expires  time.Time `json:"expires"`
	// Down is set when a probe could not reach it; cleared by its next ad
	// or a successful probe.
	Down bool `json:"down"`
	// DownSince is when it was found down or stopped advertising (zero
	// while it is usable). Such a server stays listed, as down, until it
	// advertises again or an operator removes it.
	DownSince time.Time `json:"down_since,omitzero"`
}

func (s *Server) endpoint() store.Endpoint { return store.Endpoint{Root: s.Root, HTTPS: s.HTTPS} }

// usable reports whether clients may be sent to s now: not down, not
// silent, not in a planned downtime.
func (s *Server) usable(now time.Time) bool {
	return !s.Down && (s.Static || now.Before(s.Expires)) && !s.Downtime.Active(now)
}

// holds reports whether name is below one of s's prefixes.
func (s *Server) holds(name string) bool {
	for _, p := range s.Prefixes {
		if store.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// registry is the set of known servers, keyed by name. Writers take mu;
// routing reads the prefix index (index.go) without it.
type registry struct {
	mu      sync.Mutex
	servers map[string]*entry
	byRoot  map[string][]*entry // root endpoint → entries, for the prober's verdicts
	dirty   map[*entry]struct{} // entries to redo in the index
	stale   atomic.Bool         // dirty is not empty
	view    atomic.Pointer[prefixIndex]
	downs   atomic.Int64 // entries found down by a probe
	// epoch and the earliest end of a planned downtime (Unix ns, 0
	// none): see epoch.go.
	epoch       atomic.Uint64
	downtimeEnd atomic.Int64

	dropAfter  int
	maxServers int
	// holdingsBytes is the size of the filters kept, at most
	// maxHoldingsTotal.
	holdingsBytes int
}

// maxHoldingsTotal bounds the memory a director gives servers' filters;
// servers whose filters do not fit are asked for every file.
const maxHoldingsTotal = 64 << 20

func newRegistry(dropAfter, maxServers int) *registry {
	r := &registry{servers: map[string]*entry{}, byRoot: map[string][]*entry{}, dirty: map[*entry]struct{}{},
		dropAfter: dropAfter, maxServers: maxServers}
	r.view.Store(&prefixIndex{byPrefix: map[indexKey][]*entry{}})
	r.epoch.Store(1)
	return r
}

// put records s under its name, replacing what was there; r.mu held.
func (r *registry) put(s *Server, now time.Time) {
	e := r.servers[s.Name]
	if e == nil {
		e = &entry{name: s.Name}
		r.servers[s.Name] = e
	}
	if old := e.cur.Load(); old == nil || old.Root != s.Root {
		if old != nil {
			r.unlinkRoot(e, old.Root)
		}
		r.byRoot[s.Root] = append(r.byRoot[s.Root], e)
		r.bump()
	} else if !old.usable(now) && s.usable(now) {
		r.bump()
	}
	r.noteDowntime(s, now)
	r.countDown(e.cur.Load(), s)
	r.keepHoldings(e.cur.Load(), s)
	e.cur.Store(s)
	if keys := indexKeys(s); !e.live || !slices.Equal(keys, e.indexed) {
		e.indexed, e.live = keys, true
		r.markDirty(e)
	}
}

// drop removes the entry e; r.mu held.
func (r *registry) drop(e *entry) {
	delete(r.servers, e.name)
	r.unlinkRoot(e, e.cur.Load().Root)
	r.countDown(e.cur.Load(), nil)
	r.keepHoldings(e.cur.Load(), nil)
	e.live = false
	r.markDirty(e)
}

func (r *registry) unlinkRoot(e *entry, root string) {
	l := slices.DeleteFunc(r.byRoot[root], func(x *entry) bool { return x == e })
	if len(l) == 0 {
		delete(r.byRoot, root)
		return
	}
	r.byRoot[root] = l
}

// get returns the entry of that name (a copy), if there is one.
func (r *registry) get(name string) (Server, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.servers[name]; e != nil {
		return *e.cur.Load(), true
	}
	return Server{}, false
}

// Refusals of an advertisement by the registry.
var (
	errStatic = errors.New("is a static server of the director's config: no advertisement replaces it")
	errTaken  = errors.New("belongs to another member")
	errFull   = errors.New("the director's registry is full")
)

// advertise records ad, from member, (and, for a director, the servers
// below it) as seen now. Names are guarded: a static entry is never
// replaced, an entry of another member neither; a child is skipped (and
// returned in skipped) if its name is static, owned by a member (owner)
// or learned through another director, or if the registry is full.
func (r *registry) advertise(ad Ad, now time.Time, member string, owner func(string) string) (skipped []string, err error) {
	interval := time.Duration(ad.Interval * float64(time.Second))
	if interval <= 0 {
		interval = 10 * time.Second
	}
	expires := now.Add(time.Duration(r.dropAfter) * interval)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.servers[ad.Name]; e != nil {
		switch old := e.cur.Load(); {
		case old.Static:
			return nil, fmt.Errorf("name %q %w", ad.Name, errStatic)
		case old.Member != "" && old.Member != member && old.Via == "":
			return nil, fmt.Errorf("name %q %w (%s)", ad.Name, errTaken, old.Member)
		}
	} else if r.maxServers > 0 && len(r.servers) >= r.maxServers {
		return nil, fmt.Errorf("%w (%d servers)", errFull, len(r.servers))
	}
	children := ad.Servers
	ad.Servers, ad.Probes = nil, nil
	r.put(&Server{Ad: ad, Member: member, LastSeen: now, Expires: expires}, now)
	for _, c := range flatten(children) {
		var old *Server
		if e := r.servers[c.Name]; e != nil {
			old = e.cur.Load()
		}
		switch {
		case c.Name == ad.Name,
			old != nil && (old.Static || old.Via != ad.Name),
			owner != nil && owner(c.Name) != "" && owner(c.Name) != member,
			old == nil && r.maxServers > 0 && len(r.servers) >= r.maxServers:
			// Static, another member's own entry, or another director's
			// child: not this child director's to set. Or no room. (A
			// member's own names are its own: a site box's director
			// reports its cache as name-cache.)
			skipped = append(skipped, c.Name)
			continue
		}
		r.put(&Server{Ad: c, Via: ad.Name, Member: member, LastSeen: now, Expires: expires}, now)
	}
	return skipped, nil
}

// dropMember removes every entry a member advertised (its own and the
// children it reported), when it is revoked.
func (r *registry) dropMember(member string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for name, e := range r.servers {
		if s := e.cur.Load(); !s.Static && s.Member == member {
			r.drop(e)
			gone = append(gone, name)
		}
	}
	return gone
}

// flatten lists a tree of ads depth first, without their children.
func flatten(ads []Ad) []Ad {
	var out []Ad
	for _, a := range ads {
		kids := a.Servers
		a.Servers = nil
		out = append(out, a)
		out = append(out, flatten(kids)...)
	}
	return out
}

// addStatic registers a server from the config.
func (r *registry) addStatic(s Server) {
	s.Static = true
	r.mu.Lock()
	r.put(&s, time.Now())
	r.mu.Unlock()
}

// keepHoldings settles the filter of s, replacing old (nil: none): an ad
// naming the digest of the filter the director has keeps it, one naming
// another has none until its bits come (HoldingsSender), and one that
// would take the filters past maxHoldingsTotal has none; r.mu held.
func (r *registry) keepHoldings(old, s *Server) {
	var was *Holdings
	if old != nil && old.Holdings.usable() {
		was = old.Holdings
		r.holdingsBytes -= len(was.Bits)
	}
	if s == nil || s.Holdings == nil {
		return
	}
	if s.Role != RoleOrigin {
		s.Holdings = nil // only origins are searched
		return
	}
	switch h := s.Holdings; {
	case !h.usable() && was != nil && was.Digest == h.Digest:
		s.Holdings = was
	case r.holdingsBytes+len(h.Bits) > maxHoldingsTotal:
		s.Holdings = h.summary()
	}
	r.holdingsBytes += len(s.Holdings.Bits)
}

// countDown keeps r.downs as an entry goes from old to s (nil: none);
// r.mu held.
func (r *registry) countDown(old, s *Server) {
	was, is := old != nil && old.Down, s != nil && s.Down
	switch {
	case is && !was:
		r.downs.Add(1)
	case was && !is:
		r.downs.Add(-1)
	}
}

// setDown marks the server with this root endpoint unreachable (or back).
func (r *registry) setDown(root string, down bool, now time.Time) {
	if !down && r.downs.Load() == 0 {
		return // every answer of a search lands here: none was down
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.byRoot[root] {
		old := e.cur.Load()
		s := *old
		s.Down = down
		switch {
		case down && s.DownSince.IsZero():
			s.DownSince = now
		case !down && (s.Static || now.Before(s.Expires)):
			s.DownSince = time.Time{}
		}
		if s.Down != old.Down || !s.DownSince.Equal(old.DownSince) {
			r.countDown(old, &s)
			e.cur.Store(&s)
		}
		if old.Down && !down {
			r.bump()
		}
	}
}

// expire marks advertised servers that missed too many ads as down,
// returning those newly so. They are kept: a box that went silent is a
// failure to show, not a server that never was.
func (r *registry) expire(now time.Time) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for name, e := range r.servers {
		if old := e.cur.Load(); !old.Static && now.After(old.Expires) && old.DownSince.IsZero() {
			s := *old
			s.DownSince = s.Expires
			e.cur.Store(&s)
			gone = append(gone, name)
		}
	}
	return gone
}

// remove drops the entry name (and the servers learned through it, for a
// director), on an operator's word. It reports whether there was one.
func (r *registry) remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.servers[name]
	if e == nil {
		return false
	}
	r.drop(e)
	for _, c := range r.servers {
		if c.cur.Load().Via == name {
			r.drop(c)
		}
	}
	return true
}

// list returns copies of the servers matching keep, sorted by name: for
// the views of the whole registry (routing uses covering).
func (r *registry) list(keep func(*Server) bool) []Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Server
	for _, e := range r.servers {
		if s := e.cur.Load(); keep == nil || keep(s) {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// count returns how many servers there are, and how many of them clients
// cannot be sent to now.
func (r *registry) count(now time.Time) (all, down int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.servers {
		if !e.cur.Load().usable(now) {
			down++
		}
	}
	return len(r.servers), down
}
