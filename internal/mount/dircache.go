package mount

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/store"
)

// dirCache keeps what the server said about directories and single
// paths, for a TTL, per credential: a directory's listing (with each
// entry's stat) answers lookups, attributes and "no such file" for all
// its names at the price of one request. Entries are keyed by the
// credential that asked (view.key), so a name only user A may list is
// never shown to user B. Memory is bounded: past maxEntries names the
// least recently used listings go.
type dirCache struct {
	ttl        time.Duration
	maxEntries int

	mu    sync.Mutex
	n     int        // names held
	lru   *list.List // of *cached, most recently used first
	byKey map[cacheKey]*list.Element
	// byPath finds every credential's record of a path, so a change made
	// through the mount drops them all.
	byPath map[string]map[cacheKey]struct{}
}

type cacheKey struct {
	who  string // the credential (view.key)
	path string // store path
	stat bool   // a single path's stat, not a listing
}

// cached is one listing (entries by name) or one stat (err is the
// server's "no such file", kept as an answer too).
type cached struct {
	key     cacheKey
	at      time.Time
	entries map[string]store.FileInfo
	names   []string // listing order
	fi      store.FileInfo
	err     error
	opened  atomic.Bool // a file of this listing was opened
}

// firstOpen reports whether this is the first open of a file of the
// listing's directory since it was listed.
func (r *cached) firstOpen() bool { return !r.opened.Swap(true) }

// files are the listing's entries in listing order.
func (r *cached) files() []store.FileInfo {
	fis := make([]store.FileInfo, 0, len(r.names))
	for _, n := range r.names {
		fis = append(fis, r.entries[n])
	}
	return fis
}

func newDirCache(ttl time.Duration, maxEntries int) *dirCache {
	return &dirCache{ttl: ttl, maxEntries: max(maxEntries, 1), lru: list.New(),
		byKey: map[cacheKey]*list.Element{}, byPath: map[string]map[cacheKey]struct{}{}}
}

// listing is the fresh listing of dir as who saw it, or nil.
func (c *dirCache) listing(who, dir string) *cached {
	return c.get(cacheKey{who: who, path: dir})
}

// stat is the fresh stat of p as who saw it, or nil.
func (c *dirCache) stat(who, p string) *cached {
	return c.get(cacheKey{who: who, path: p, stat: true})
}

func (c *dirCache) get(k cacheKey) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byKey[k]
	if e == nil {
		return nil
	}
	r := e.Value.(*cached)
	if time.Since(r.at) >= c.ttl {
		c.dropLocked(e)
		return nil
	}
	c.lru.MoveToFront(e)
	return r
}

// putListing records dir's entries as who saw them.
func (c *dirCache) putListing(who, dir string, fis []store.FileInfo) *cached {
	r := &cached{key: cacheKey{who: who, path: dir}, at: time.Now(), entries: make(map[string]store.FileInfo, len(fis))}
	for _, fi := range fis {
		if fi.Name == "" || fi.Name == "." || fi.Name == ".." {
			continue
		}
		if _, dup := r.entries[fi.Name]; !dup {
			r.names = append(r.names, fi.Name)
		}
		r.entries[fi.Name] = fi
	}
	c.put(r)
	return r
}

// putStat records p's stat (or the server's answer that it is not
// there) as who saw it.
func (c *dirCache) putStat(who, p string, fi store.FileInfo, err error) {
	c.put(&cached{key: cacheKey{who: who, path: p, stat: true}, at: time.Now(), fi: fi, err: err})
}

func (c *dirCache) put(r *cached) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byKey[r.key]; old != nil {
		c.dropLocked(old)
	}
	c.byKey[r.key] = c.lru.PushFront(r)
	if c.byPath[r.key.path] == nil {
		c.byPath[r.key.path] = map[cacheKey]struct{}{}
	}
	c.byPath[r.key.path][r.key] = struct{}{}
	c.n += r.size()
	for c.n > c.maxEntries && c.lru.Len() > 1 {
		c.dropLocked(c.lru.Back())
	}
}

func (r *cached) size() int { return len(r.entries) + 1 }

func (c *dirCache) dropLocked(e *list.Element) {
	r := c.lru.Remove(e).(*cached)
	delete(c.byKey, r.key)
	if m := c.byPath[r.key.path]; m != nil {
		delete(m, r.key)
		if len(m) == 0 {
			delete(c.byPath, r.key.path)
		}
	}
	c.n -= r.size()
}

// invalidate forgets, for every credential, the listing and the stat of
// each path given: called after the mount changed them.
func (c *dirCache) invalidate(paths ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		for k := range c.byPath[p] {
			if e := c.byKey[k]; e != nil {
				c.dropLocked(e)
			}
		}
	}
}

// held is the number of names cached (for tests and the log).
func (c *dirCache) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
