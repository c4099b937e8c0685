package director

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"sort"
	"strconv"
	"time"

	"sitebox/internal/store"
)

var _ store.Router = (*Director)(nil)

// Route answers where a call goes: reads (stat, open, checksum) to a
// server holding the file, uploads and new directories to an origin of
// this site, changes of a path (rm, rmdir, mv, chmod, a WebDAV COPY) to
// the origin holding it. Stat of the namespace root and of the
// directories above the servers' prefixes, listings and locate are
// answered here.
func (d *Director) Route(ctx context.Context, c store.Call) (store.Route, error) {
	switch c.Op {
	case "stat":
		if _, here := d.statHere(c.Path); here {
			return store.Route{}, nil
		}
	case "open", "checksum":
	case "create", "mkdir":
		if c.Create.Update { // open for update, truncate: the file exists
			return d.changeRoute(ctx, c.Op, c.Path)
		}
		return d.uploadRoute(ctx, c.Op, c.Path)
	case "rm", "rmdir", "mv", "chmod", "copy", "getxattr", "listxattr", "setxattr", "delxattr":
		// A WebDAV COPY (within the server or pushed to another) is
		// done by the origin holding the source, not a cache; user
		// attributes are kept by the origin holding the file.
		return d.changeRoute(ctx, c.Op, c.Path)
	default:
		return store.Route{}, nil
	}
	return d.route(ctx, c.Op, c.Path)
}

// uploadRoute sends an upload (or a new directory) to the origin at this
// site with the most free space whose prefix covers the path. What was
// known about the path is forgotten at once: the client is about to
// create it, and a stat or checksum right after the upload (gfal-copy -K)
// must not get the cached "not found".
func (d *Director) uploadRoute(ctx context.Context, op, name string) (store.Route, error) {
	now := time.Now()
	origins := d.reg.covering(RoleOrigin, name, func(s *Server) bool {
		return s.Site == d.cfg.Site && s.usable(now) && !s.Static
	})
	if len(origins) == 0 {
		return store.Route{}, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: no origin at site %q exports %s for uploads", store.ErrUnsupported, d.cfg.Site, name)}
	}
	if err := refusedByAll(op, name, store.RequestFrom(ctx), origins); err != nil {
		d.stats.count("not_found")
		return store.Route{}, err
	}
	sort.SliceStable(origins, func(i, j int) bool { return origins[i].Free > origins[j].Free })
	d.loc.forget(name)
	why := "upload to the origin with most free space"
	if op == "mkdir" {
		why = "new directory on the origin with most free space"
	}
	return d.redirect(op, name, store.RequestFrom(ctx), 0, endpoints(origins), why), nil
}

// changeRoute sends a change of an existing path (rm, rmdir, mv, chmod,
// copy) to an origin holding it, one of this site first: never to a
// cache or a VO federation, whose copies are not this federation's data.
// The cached answer for the path is forgotten, since the change is about
// to make it wrong.
func (d *Director) changeRoute(ctx context.Context, op, name string) (store.Route, error) {
	// A change waits for every origin's answer (so does cmsd's for
	// updates): it goes to the best holder, not the first to answer.
	q, rt, err := d.ask(ctx, op, name, false)
	if q == nil {
		return rt, err
	}
	req, hops, tried, asked, holders := q.req, q.hops, q.tried, q.asked, q.holders
	if len(holders) == 0 {
		d.stats.count("not_found")
		return store.Route{}, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: no origin in this director's federation holds it (asked %d server(s))", store.ErrNotFound, asked)}
	}
	if local := filter(holders, func(s *Server) bool { return s.Site == d.cfg.Site }); len(local) > 0 {
		holders = local
	}
	d.loc.forget(name)
	d.stats.count("site")
	return d.redirect(op, name, req, hops, endpoints(best(holders, tried)), "change on the origin holding it"), nil
}

// route decides where a read of name goes: to the servers holding it,
// best first, or a wait while the federation is still being asked.
func (d *Director) route(ctx context.Context, op, name string) (store.Route, error) {
	q, rt, err := d.ask(ctx, op, name, true)
	if q == nil {
		return rt, err
	}
	req, hops, tried, asked, holders, site := q.req, q.hops, q.tried, q.asked, q.holders, q.site
	redirect := func(kind string, to []*Server, why string) (store.Route, error) {
		d.stats.count(kind)
		return d.redirect(op, name, req, hops, endpoints(to), why), nil
	}
	if local := filter(holders, func(s *Server) bool { return s.Site == site }); len(local) > 0 {
		return redirect("site", best(local, tried), "data at the client's site "+site)
	}
	if caches := d.siteCaches(req, name, site, tried); len(caches) > 0 {
		return redirect("cache", best(caches, tried), "remote data through the cache of site "+site)
	}
	if len(holders) > 0 {
		return redirect("replica", best(holders, tried), "replica at site "+holders[0].Site)
	}
	if len(d.cfg.Parents) > 0 {
		d.stats.count("parent")
		return d.redirect(op, name, req, hops, d.cfg.Parents, "not in this director's servers: asking the parent"), nil
	}
	now := time.Now()
	if rt, ok, err := d.downRoute(op, name, tried, now); ok {
		return rt, err
	}
	if rt, ok := d.startupRoute(now); ok {
		return rt, nil
	}
	return d.fallback(op, name, req, hops, asked, tried)
}

// query is what a route decision starts from: who asks, from which site,
// how many directors sent them here, where they failed, how many origins
// were asked and which hold the path.
type query struct {
	req     *store.Request
	site    string
	hops    int
	tried   tried
	asked   int
	holders []*Server
}

// clientSite is the site a client is at: the one its network belongs to,
// else this director's.
func (d *Director) clientSite(req *store.Request) string {
	if site := d.sites.site(req.Client); site != "" {
		return site
	}
	return d.cfg.Site
}

// ask stops a redirect loop, rechecks the servers the client says it
// failed at, and asks the origins which hold name. A nil query comes
// with the answer to give instead: the loop error, or a wait while the
// federation is still being asked. With early, a path not located yet is
// answered once an origin holds it and the client's site's origins have
// all answered (see early): a read goes to a holder at once.
func (d *Director) ask(ctx context.Context, op, name string, early bool) (*query, store.Route, error) {
	req := store.RequestFrom(ctx)
	var hops int
	if h := req.Opaque.Get(hopsKey); h != "" { // a client's first request has none: no error to build
		hops, _ = strconv.Atoi(h)
	}
	if hops >= MaxHops {
		d.stats.count("loop")
		return nil, store.Route{}, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: redirected %d times: a loop between directors? (last: %s)", store.ErrInvalid, hops, d.cfg.Name)}
	}
	tried := triedSet(req.Opaque.Get("tried"))
	if len(tried) > 0 {
		d.recheckTried(name, tried)
	}
	site := d.clientSite(req)
	asked, holders, done := d.holders(req, name, tried, site, early)
	if !done {
		d.stats.count("wait")
		return nil, store.Route{Retry: true, Wait: time.Second, Reason: "searching the federation"}, nil
	}
	if err := refusedByAll(op, name, req, holders); err != nil {
		d.stats.count("not_found")
		return nil, store.Route{}, err
	}
	return &query{req: req, site: site, hops: hops, tried: tried, asked: asked, holders: holders}, store.Route{}, nil
}

// refusedByAll answers a client back from a server that refused its
// request with a file system error (XrdCl sends tried=HOST&triedrc=fserr
// after a 3005: "not a directory", "not empty") when every server it
// could be sent to is on a host it tried. Sent there again it would only
// hear the same refusal, and come back, until the redirect limit.
// XRootD's manager answers such a client that no server is available
// (3011), and so does a director.
func refusedByAll(op, name string, req *store.Request, servers []*Server) error {
	if len(servers) == 0 || req.Opaque.Get("triedrc") != "fserr" {
		return nil
	}
	t := triedSet(req.Opaque.Get("tried"))
	for _, s := range servers {
		if !t.has(s.Root) && !t.hostTried(s.Root) {
			return nil
		}
	}
	return &store.PathError{Op: op, Path: name, Err: &refusedError{fmt.Sprintf(
		"no server can take the request: the one at %s refused it with a file system error (fserr); ask it directly for the reason", req.Opaque.Get("tried"))}}
}

// refusedError is refusedByAll's answer: "not found" to the protocols (3011,
// 404), in words of its own.
type refusedError struct{ msg string }

func (e *refusedError) Error() string        { return e.msg }
func (e *refusedError) Is(target error) bool { return target == store.ErrNotFound }

// holders asks the usable origins covering name (and not tried) which
// hold it; done is false while the answer is still being looked for.
// An https client (which does not retry a 503 by itself) waits for the
// answer up to the locate deadline; a root:// client is told to wait.
// With early, the answer may come before every origin's (see ask).
func (d *Director) holders(req *store.Request, name string, tried tried, site string, early bool) (asked int, holders []*Server, done bool) {
	wait := d.cfg.WaitAfter
	if req.Proto == "https" {
		wait = d.cfg.LocateTimeout + time.Second
	}
	var local func(*Server) bool
	if early {
		local = func(s *Server) bool { return s.Site == site }
	}
	return d.findHolders(name, tried, wait, local)
}

// findHolders is holders, waiting at most wait; asked is how many
// servers were asked. A path located while no server became eligible
// since (the registry's epoch) is answered from its holders alone. With
// local set, a search under way answers once an origin holds the path
// and every origin local says is at the client's site has answered.
func (d *Director) findHolders(name string, tried tried, wait time.Duration, local func(*Server) bool) (asked int, holders []*Server, done bool) {
	now := time.Now()
	eligible := func(s *Server) bool { return s.Root != "" && s.usable(now) && !tried.has(s.Root) }
	epoch := d.reg.epochAt(now)
	if has, n, ok := d.loc.known(name, epoch); ok {
		return n, d.reg.atRoots(RoleOrigin, name, has, eligible), true
	}
	origins := d.reg.covering(RoleOrigin, name, eligible)
	if len(origins) == 0 {
		return 0, nil, true
	}
	if len(tried) > 0 {
		epoch = 0 // the servers tried were left out: not every eligible one was asked
	}
	if local != nil {
		// A read asks first the servers whose filters say they may hold
		// the file, a few of them; if one does, that answers for all
		// (cover).
		key := keyOf(name)
		if likely, filtered := narrowed(key, origins); filtered {
			if first := firstAsked(likely, local, key.h1); len(first) < len(origins) {
				start := time.Now()
				roots, done := d.askFirst(name, first, wait, epoch, local)
				if !done || len(roots) > 0 {
					return len(origins), roots, done
				}
				// None does: the file is newer than their filters, or missing.
				d.stats.filtersMissed.Add(1)
				wait -= time.Since(start)
			}
		}
	}
	roots, done := d.loc.lookup(name, rootsOf(origins), wait, epoch, 0, earlyAfter(origins, local))
	return len(origins), pick(origins, roots), done
}

// askFirst asks the servers first whether they hold name, findHolders'
// first step (none: nothing to ask), and returns the holders among them.
func (d *Director) askFirst(name string, first []*Server, wait time.Duration, epoch uint64, local func(*Server) bool) ([]*Server, bool) {
	if len(first) == 0 {
		return nil, true
	}
	roots, done := d.loc.lookup(name, rootsOf(first), wait, 0, epoch, earlyAfter(first, local))
	if len(roots) > 0 {
		d.stats.filtersFound.Add(1)
	}
	return pick(first, roots), done
}

// narrowed returns the origins whose holdings filters say they may hold
// the name of key, with those that send none; filtered is false if none
// sends a filter.
func narrowed(key holdingsKey, origins []*Server) (likely []*Server, filtered bool) {
	for _, s := range origins {
		usable := s.Holdings.usable()
		filtered = filtered || usable
		if !usable || s.Holdings.mayHold(key) {
			likely = append(likely, s)
		}
	}
	return likely, filtered
}

// firstAsks is how many of the servers a file's filters point to a read
// asks before it is redirected, besides those at the client's site: a
// file held by a hundred servers needs one to answer, not a hundred
// questions first (at tens of microseconds of the director's CPU each).
// Eight, against sixteen in alternated runs at 1,000 servers, took a
// third off the director's CPU and the p50 of a first open of a file
// held by a hundred servers, and changed nothing for files held by few.
const firstAsks = 8

// firstAsked returns the servers of likely to ask first: every one at
// the client's site (a read waits for their answers: earlyAfter), then up
// to firstAsks others, from a place turn chooses in their order, so that
// different files held by the same servers spread over them.
func firstAsked(likely []*Server, local func(*Server) bool, turn uint64) []*Server {
	var out, others []*Server
	for _, s := range likely {
		if local(s) {
			out = append(out, s)
		} else {
			others = append(others, s)
		}
	}
	if len(others) <= firstAsks {
		return append(out, others...)
	}
	at := int(turn % uint64(len(others)))
	for i := range firstAsks {
		out = append(out, others[(at+i)%len(others)])
	}
	return out
}

func rootsOf(servers []*Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.Root
	}
	return out
}

// earlyAfter is the early answer of a search of servers with local set
// (nil: none): once every one of them local says is at the client's
// site has answered.
func earlyAfter(servers []*Server, local func(*Server) bool) *early {
	if local == nil {
		return nil
	}
	e := &early{after: []string{}}
	for _, s := range servers {
		if local(s) {
			e.after = append(e.after, s.Root)
		}
	}
	return e
}

// siteCaches are the caches of site covering name. A client back from
// the site cache (tried= names its host) is not sent there again: the
// cache has already asked the federation, or is failing; the client goes
// to a replica directly, or gets the answer. Nor is a cache asking for
// its own fill (sbx.via=cache).
func (d *Director) siteCaches(req *store.Request, name, site string, tried tried) []*Server {
	if req.Opaque.Get(store.ViaKey) == store.ViaCache || site == "" {
		return nil
	}
	now := time.Now()
	return d.reg.covering(RoleCache, name, func(s *Server) bool {
		return s.Site == site && s.usable(now) &&
			!tried.has(s.Root) && !tried.hostTried(s.Root)
	})
}

// fallback sends what no server here holds to the VO's federation, or
// says why not.
func (d *Director) fallback(op, name string, req *store.Request, hops, asked int, tried tried) (store.Route, error) {
	vo := req.ClientVO() // ?vo=, else the token's groups
	if vo == "" {
		vo = d.cfg.DefaultVO
	}
	if ep, ok := d.cfg.VO[vo]; ok && vo != "" {
		d.stats.count("vo")
		return d.redirect(op, name, req, hops, []store.Endpoint{ep}, "VO "+vo+" federation"), nil
	}
	why := fmt.Sprintf("asked %d server(s)", asked)
	if len(tried) > 0 {
		why += "; already tried at " + req.Opaque.Get("tried")
		if rc := req.Opaque.Get("triedrc"); rc != "" {
			why += " (" + rc + ")"
		}
	}
	if vo == "" {
		why += "; no VO given (?vo= or a token) for a federation fallback"
	} else {
		why += fmt.Sprintf("; VO %q has no federation configured", vo)
	}
	// A client back from a server that failed (not one that said "no such
	// file") learns that, not that the file does not exist.
	if rc := req.Opaque.Get("triedrc"); len(tried) > 0 && rc != "" && rc != "enoent" {
		d.stats.count("down")
		return store.Route{}, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: no other server to send the client to (%s)", store.ErrUnavailable, why)}
	}
	d.stats.count("not_found")
	return store.Route{}, &store.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: no server in the federation has it (%s)", store.ErrNotFound, why)}
}

// recheckTried asks the servers a client says it failed at (tried=, by
// host:port or, as XrdCl sends it, by host alone) whether they still hold
// name, before routing it again: a dead server is marked down and one
// that lost the file is no longer offered, so the retry goes elsewhere
// instead of round the same loop until the redirect limit.
func (d *Director) recheckTried(name string, t tried) {
	now := time.Now()
	var roots []string
	for _, s := range d.reg.covering(RoleOrigin, name, func(s *Server) bool {
		return s.Root != "" && s.usable(now) && (t.has(s.Root) || t.hostTried(s.Root))
	}) {
		roots = append(roots, s.Root)
	}
	d.loc.recheck(name, roots, d.reg.epochAt(now))
}

// redirect is the route to servers to, with the client's VO and the hop
// count in the CGI.
func (d *Director) redirect(op, name string, req *store.Request, hops int, to []store.Endpoint, why string) store.Route {
	// Written out rather than through url.Values, in the order its
	// Encode gives (keys sorted): every redirect passes here.
	opaque := hopsKey + "=" + strconv.Itoa(hops+1)
	// The VO goes along so the next director (which may not see the
	// client's token) picks the same federation.
	if vo := req.ClientVO(); vo != "" {
		opaque += "&vo=" + url.QueryEscape(vo)
	}
	if d.log.Enabled(context.Background(), slog.LevelDebug) {
		d.log.Debug("redirect", "op", op, "path", name, "to", to[0].String(), "why", why)
	}
	return store.Route{To: to, Opaque: opaque, Reason: why}
}

func endpoints(servers []*Server) []store.Endpoint {
	eps := make([]store.Endpoint, len(servers))
	for i, s := range servers {
		eps[i] = s.endpoint()
	}
	return eps
}
