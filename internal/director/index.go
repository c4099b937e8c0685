package director

import (
	"slices"
	"strings"
	"sync/atomic"

	"sitebox/internal/store"
)

// The registry's read path. A routing decision needs the servers whose
// prefixes cover one path; with a thousand servers, listing and copying
// every entry per request cost more than everything else a redirect does.
// So the registry keeps, besides its map of names, an index by exported
// prefix that readers use without a lock and without copying:
//
//   - an entry's Server is never changed, only replaced (an atomic
//     pointer), so a reader holding one needs no lock; the usual
//     advertisement (same prefixes, new load, space and expiry) is one
//     pointer swap and touches no index;
//   - the index (role and prefix → entries by name) is an immutable
//     value published through an atomic pointer. A new server, a change
//     of prefixes or role, or a removal marks the entry dirty; the next
//     reader folds every dirty entry into a new index at once, so a
//     thousand servers joining cost one rebuild per read, not one per
//     advertisement.
//
// A lookup walks the path's ancestors (each a map lookup) and visits only
// the servers exporting one of them: its work grows with the servers that
// can answer for the path, not with the registry.

// entry is one name of the registry.
type entry struct {
	name string
	cur  atomic.Pointer[Server] // replaced, never modified
	// Under registry.mu only: the keys the entry is to be indexed under
	// (sorted, unique), those it is indexed under in the published index,
	// and whether it is still in the registry.
	indexed, published []indexKey
	live               bool
}

// indexKey is a role and a prefix exported in it: routing asks for the
// origins, or the caches, covering a path.
type indexKey struct{ role, prefix string }

// prefixIndex maps an exported prefix to the entries exporting it,
// sorted by name. It is never modified once published.
type prefixIndex struct {
	byPrefix map[indexKey][]*entry
}

// indexKeys is the sorted, unique form s is indexed under.
func indexKeys(s *Server) []indexKey {
	out := make([]indexKey, 0, len(s.Prefixes))
	for _, p := range s.Prefixes {
		out = append(out, indexKey{s.Role, p})
	}
	slices.SortFunc(out, func(a, b indexKey) int { return strings.Compare(a.prefix, b.prefix) })
	return slices.Compact(out)
}

// markDirty schedules e's index entries to be redone, and starts a new
// epoch (epoch.go); r.mu held.
func (r *registry) markDirty(e *entry) {
	r.dirty[e] = struct{}{}
	r.stale.Store(true)
	r.bump()
}

// index returns the published index, first folding in the changes made
// since (one reader does it, under the writers' lock).
func (r *registry) index() *prefixIndex {
	if r.stale.Load() {
		r.mu.Lock()
		r.commit()
		r.mu.Unlock()
	}
	return r.view.Load()
}

// commit publishes a new index with the dirty entries in their current
// places; r.mu held. Only the prefixes they leave or join are rebuilt,
// each by one merge of the old list with the (few) entries added.
func (r *registry) commit() {
	defer r.stale.Store(false)
	if len(r.dirty) == 0 {
		return
	}
	base := r.view.Load()
	touched := map[indexKey]bool{}
	adds := map[indexKey][]*entry{}
	for e := range r.dirty {
		for _, p := range e.published {
			touched[p] = true
		}
		if e.live {
			for _, p := range e.indexed {
				touched[p] = true
				adds[p] = append(adds[p], e)
			}
		}
	}
	next := make(map[indexKey][]*entry, len(base.byPrefix)+len(adds))
	for p, l := range base.byPrefix {
		if !touched[p] {
			next[p] = l
		}
	}
	for p := range touched {
		if l := mergeEntries(base.byPrefix[p], r.dirty, adds[p]); len(l) > 0 {
			next[p] = l
		}
	}
	for e := range r.dirty {
		e.published = nil
		if e.live {
			e.published = e.indexed
		}
	}
	clear(r.dirty)
	r.view.Store(&prefixIndex{byPrefix: next})
}

// mergeEntries is old without the dirty entries, merged by name with
// adds.
func mergeEntries(old []*entry, dirty map[*entry]struct{}, adds []*entry) []*entry {
	slices.SortFunc(adds, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	out := make([]*entry, 0, len(old)+len(adds))
	for _, e := range old {
		if _, d := dirty[e]; d {
			continue
		}
		for len(adds) > 0 && adds[0].name < e.name {
			out = append(out, adds[0])
			adds = adds[1:]
		}
		out = append(out, e)
	}
	return append(out, adds...)
}

// maxDepth is how many matching ancestors of a path a lookup holds
// without allocating; deeper nestings of exported prefixes still work.
const maxDepth = 8

// covering returns the servers of role whose prefixes cover name and
// that keep accepts, sorted by name. They are the registry's own values:
// shared, never to be modified.
func (r *registry) covering(role, name string, keep func(*Server) bool) []*Server {
	ix := r.index()
	var buf [maxDepth][]*entry
	lists := buf[:0]
	// The prefixes covering name (store.HasPrefix) are name itself, each
	// part of it before a '/', and "/".
	for i := len(name); i >= 0; i-- {
		if i < len(name) && name[i] != '/' {
			continue
		}
		if l := ix.byPrefix[indexKey{role, name[:i]}]; len(l) > 0 {
			lists = append(lists, l)
		}
	}
	if name != "/" {
		if l := ix.byPrefix[indexKey{role, "/"}]; len(l) > 0 {
			lists = append(lists, l)
		}
	}
	var out []*Server
	visit := func(e *entry) {
		// The index may lag an advertisement that changed the prefixes by
		// a moment: the server's own prefixes decide.
		if s := e.cur.Load(); s.Role == role && s.holds(name) && (keep == nil || keep(s)) {
			out = append(out, s)
		}
	}
	if len(lists) == 1 {
		for _, e := range lists[0] {
			visit(e)
		}
		return out
	}
	// Several ancestors are exported: merge their lists by name; a server
	// exporting two of them is met twice, one after the other.
	last, met := "", false
	for {
		k := -1
		for i, l := range lists {
			if len(l) > 0 && (k < 0 || l[0].name < lists[k][0].name) {
				k = i
			}
		}
		if k < 0 {
			return out
		}
		e := lists[k][0]
		lists[k] = lists[k][1:]
		if met && e.name == last {
			continue
		}
		last, met = e.name, true
		visit(e)
	}
}

// exportsBelow reports whether a usable server exports name or a prefix
// below it: the director answers stat for such a directory itself.
func (r *registry) exportsBelow(name string, usable func(*Server) bool) bool {
	for k, l := range r.index().byPrefix {
		if !store.HasPrefix(k.prefix, name) {
			continue
		}
		for _, e := range l {
			if s := e.cur.Load(); usable(s) && slices.Contains(s.Prefixes, k.prefix) {
				return true
			}
		}
	}
	return false
}
