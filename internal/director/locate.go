package director

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"sitebox/internal/keptgo"
	"sitebox/internal/store"
)

// prober asks one server whether it holds a path. The director's uses
// root:// stat through our client; tests substitute their own.
type prober interface {
	Stat(ctx context.Context, root, name string) (store.FileInfo, error)
	List(ctx context.Context, root, name string) ([]store.FileInfo, error)
}

// found is a search result: the root endpoints of the servers holding a
// path, kept until expires.
type found struct {
	holders   map[string]bool
	has       []string // the roots holding it: holders' true ones
	expires   time.Time
	rechecked time.Time // last recheck on a client's tried=
	// epoch is the registry's epoch at which every server eligible for
	// the path has an answer here (0: not known to be so).
	epoch uint64
}

// locator finds which candidate servers hold a path: all asked in
// parallel under a deadline, answers kept for a TTL, concurrent searches
// for one path coalesced.
type locator struct {
	probe              prober
	timeout            time.Duration
	ttl, negTTL        time.Duration
	onUnreachable      func(root string)
	onReachable        func(root string)
	mu                 sync.Mutex
	results            map[string]*found
	running            map[string]*pending // full searches under way, by path
	flight             singleflight.Group  // rechecks under way
	searches, answered int64               // searches run; lookups answered from results
	stats              *stats
	// askers run the questions of a search (nil: a goroutine each).
	askers *keptgo.Pool
}

// known returns the roots holding name if what is known about it covers
// every server eligible at the registry's epoch: no server need be
// visited to tell. asked is how many servers answered.
func (l *locator) known(name string, epoch uint64) (has []string, asked int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.results[name]
	if f == nil || f.epoch == 0 || f.epoch != epoch || time.Now().After(f.expires) {
		return nil, 0, false
	}
	l.answered++
	return f.has, len(f.holders), true
}

// lookup returns the holders of name among cands (root endpoints, the
// servers eligible at the registry's epoch), searching those not
// answered recently. wait bounds how long the caller waits; the search
// goes on in the background when it is exceeded, and done reports
// whether there is an answer: every candidate's, or with e, the holders
// found once e is satisfied. A search of cands that finds a holder
// answers for the epoch cover too (0: none): see Director.narrowed.
func (l *locator) lookup(name string, cands []string, wait time.Duration, epoch, cover uint64, e *early) (holders []string, done bool) {
	if r := l.cached(name, cands, epoch); r != nil {
		return r, true
	}
	p := l.start(name, cands, epoch, cover)
	var in map[string]bool // cands, to tell which holders count
	if e != nil {
		in = make(map[string]bool, len(cands))
		for _, c := range cands {
			in[c] = true
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for finished := false; !finished; {
		has, changed := l.enough(p, in, e)
		if has != nil {
			return has, true
		}
		select {
		case <-p.done:
			finished = true
		case <-changed:
		case <-timer.C:
			return nil, false
		}
	}
	if r := l.cached(name, cands, epoch); r != nil {
		return r, true
	}
	// A candidate added while we searched: not asked yet, so not complete;
	// search again next time.
	return l.partial(name, cands, p), true
}

// cached returns the holders among cands if every candidate's answer is
// known and fresh, else nil. The answer then covers the epoch cands were
// taken at.
func (l *locator) cached(name string, cands []string, epoch uint64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.results[name]
	if f == nil || time.Now().After(f.expires) {
		return nil
	}
	out := []string{}
	for _, c := range cands {
		has, known := f.holders[c]
		if !known {
			return nil
		}
		if has {
			out = append(out, c)
		}
	}
	f.epoch = epoch
	l.answered++
	return out
}

// partial returns the holders among cands known from the results kept
// or from the search p that just ended (whose results are not kept when
// the path was forgotten meanwhile).
func (l *locator) partial(name string, cands []string, p *pending) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	f := l.results[name]
	for _, c := range cands {
		if f != nil && f.holders[c] || p.answered[c] {
			out = append(out, c)
		}
	}
	return out
}

// probeAnswer is what one server said of a name during a search.
type probeAnswer struct {
	root       string
	has, known bool
	down       bool // unreachable: marked down, so no longer eligible
}

// ask asks the server c whether it holds name.
func (l *locator) ask(ctx context.Context, c, name string) probeAnswer {
	_, err := l.probe.Stat(ctx, c, name)
	known, down := true, false
	switch {
	case err == nil:
		l.onReachable(c)
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrPermission), errors.Is(err, store.ErrInvalid):
		l.onReachable(c) // it answered
	default:
		// No answer is not "not here": nothing is kept, so the server
		// is asked again once it is back.
		known = false
		if ctx.Err() == nil {
			l.onUnreachable(c)
			down = true
		}
	}
	// A directory counts: `xrdfs ls` locates the servers holding one
	// before asking each for its listing.
	return probeAnswer{c, err == nil, known, down}
}

// search asks every candidate and records the answers. A server that
// cannot be reached counts as not holding the file and is reported, so
// the director stops sending clients there.
//
// A full search (p, the lookups' view of it, set) asks every server
// eligible at epoch; a partial one (a recheck) only some, the others'
// answers kept from before.
func (l *locator) search(name string, cands []string, epoch uint64, p *pending) {
	partial := p == nil
	if l.stats != nil {
		defer l.stats.searched(time.Now())
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	ch := make(chan probeAnswer, len(cands))
	for _, c := range cands {
		if l.askers != nil {
			l.askers.Go(func() { ch <- l.ask(ctx, c, name) })
		} else {
			go func() { ch <- l.ask(ctx, c, name) }()
		}
	}
	holders := map[string]bool{}
	anyHas, complete := false, true
	for range cands {
		a := <-ch
		if p != nil {
			l.heard(p, a)
		}
		if a.known {
			holders[a.root] = a.has
			anyHas = anyHas || a.has
		}
		complete = complete && (a.known || a.down)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if p != nil {
		defer close(p.done)
		if l.running[name] != p {
			// Forgotten (being changed) or overtaken by a search of more
			// servers while this one ran: its answers may be stale, and
			// the lookups waiting on it have them in p.
			return
		}
		delete(l.running, name)
	}
	if l.results == nil {
		l.results = map[string]*found{}
	}
	// Fresh answers of servers not asked this time are kept (a recheck
	// asks only some); the entry lives as long as its positive or
	// negative TTL from now.
	// The whole epoch is covered if every server asked answered (or is
	// down now) and, for a recheck of a few, the rest was covered before.
	old := l.results[name]
	fresh := old != nil && time.Now().Before(old.expires)
	if !complete || partial && (!fresh || old.epoch != epoch) {
		epoch = 0
	}
	if p != nil && p.cover != 0 && complete && anyHas {
		epoch = p.cover
	}
	if fresh {
		for root, has := range old.holders {
			if _, answered := holders[root]; !answered && !slices.Contains(cands, root) {
				holders[root] = has
				anyHas = anyHas || has
			}
		}
	}
	ttl := l.negTTL
	if anyHas {
		ttl = l.ttl
	}
	f := &found{holders: holders, expires: time.Now().Add(ttl), epoch: epoch}
	for root, has := range holders {
		if has {
			f.has = append(f.has, root)
		}
	}
	if old != nil {
		f.rechecked = old.rechecked
	}
	l.results[name] = f
	l.searches++
}

// recheckAfter is how often a client's tried= may have a path's
// servers asked again, so clients cannot turn retries into a storm of
// probes.
const recheckAfter = time.Second

// recheck asks cands again, whatever is known: a client came back saying
// it failed at them (XRootD's tried= CGI). A server that went away is
// marked down by the search; one that lost the file stops being offered.
// Concurrent rechecks of the same path and servers are one.
func (l *locator) recheck(name string, cands []string, epoch uint64) {
	if len(cands) == 0 {
		return
	}
	l.mu.Lock()
	if f := l.results[name]; f != nil {
		if time.Since(f.rechecked) < recheckAfter {
			l.mu.Unlock()
			return
		}
		f.rechecked = time.Now()
	}
	l.mu.Unlock()
	key := "recheck\x00" + name + "\x00" + strings.Join(cands, ",")
	l.flight.Do(key, func() (any, error) {
		l.search(name, cands, epoch, nil)
		return nil, nil
	})
}

// forget drops what is known about name, so the next lookup asks the
// servers again: the path is being created or changed.
func (l *locator) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.results, name)
	delete(l.running, name) // a search under way is not joined, nor its result kept
}

// sweep drops expired results so the map does not grow without bound.
func (l *locator) sweep(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, f := range l.results {
		if now.After(f.expires) {
			delete(l.results, k)
		}
	}
}

// The goroutines kept for a search's questions: enough for a search of
// a thousand servers, each holding its stack (a few KiB) for at most
// askerIdleAfter.
const (
	maxIdleAskers  = 1024
	askerIdleAfter = 2 * time.Second
)
