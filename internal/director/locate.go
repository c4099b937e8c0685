package director

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

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
	expires   time.Time
	rechecked time.Time // last recheck on a client's tried=
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
	flight             singleflight.Group
	searches, answered int64 // searches run; lookups answered from results
	stats              *stats
}

// lookup returns the holders of name among cands (root endpoints),
// searching those not answered recently. wait bounds how long the caller
// waits; the search goes on in the background when it is exceeded, and
// done reports whether the answer is complete.
func (l *locator) lookup(name string, cands []string, wait time.Duration) (holders []string, done bool) {
	if r := l.cached(name, cands); r != nil {
		return r, true
	}
	ch := l.flight.DoChan(name, func() (any, error) {
		l.search(name, cands)
		return nil, nil
	})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
		return nil, false
	}
	if r := l.cached(name, cands); r != nil {
		return r, true
	}
	// A candidate added while we searched: not asked yet, so not complete;
	// search again next time.
	return l.partial(name, cands), true
}

// cached returns the holders among cands if every candidate's answer is
// known and fresh, else nil.
func (l *locator) cached(name string, cands []string) []string {
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
	l.answered++
	return out
}

func (l *locator) partial(name string, cands []string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	if f := l.results[name]; f != nil {
		for _, c := range cands {
			if f.holders[c] {
				out = append(out, c)
			}
		}
	}
	return out
}

// search asks every candidate and records the answers. A server that
// cannot be reached counts as not holding the file and is reported, so
// the director stops sending clients there.
func (l *locator) search(name string, cands []string) {
	if l.stats != nil {
		defer l.stats.searched(time.Now())
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	type answer struct {
		root       string
		has, known bool
	}
	ch := make(chan answer, len(cands))
	for _, c := range cands {
		go func() {
			_, err := l.probe.Stat(ctx, c, name)
			known := true
			switch {
			case err == nil:
				l.onReachable(c)
			case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrPermission), errors.Is(err, store.ErrInvalid):
				l.onReachable(c) // it answered
			default:
				// No answer is not "not here": nothing is kept, so the
				// server is asked again once it is back.
				known = false
				if ctx.Err() == nil {
					l.onUnreachable(c)
				}
			}
			// A directory counts: `xrdfs ls` locates the servers
			// holding one before asking each for its listing.
			ch <- answer{c, err == nil, known}
		}()
	}
	holders := map[string]bool{}
	anyHas := false
	for range cands {
		if a := <-ch; a.known {
			holders[a.root] = a.has
			anyHas = anyHas || a.has
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.results == nil {
		l.results = map[string]*found{}
	}
	// Fresh answers of servers not asked this time are kept (a recheck
	// asks only some); the entry lives as long as its positive or
	// negative TTL from now.
	old := l.results[name]
	if old != nil && time.Now().Before(old.expires) {
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
	f := &found{holders: holders, expires: time.Now().Add(ttl)}
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
func (l *locator) recheck(name string, cands []string) {
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
		l.search(name, cands)
		return nil, nil
	})
}

// forget drops what is known about name, so the next lookup asks the
// servers again: the path is being created or changed.
func (l *locator) forget(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.results, name)
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
