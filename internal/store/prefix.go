package store

import (
	"iter"
	"sort"
)

// PrefixTable maps namespace prefixes to values and finds the value of the
// longest prefix holding a path, by whole elements as HasPrefix does:
// "/store/a" holds "/store/a/x" but not "/store/ab", and "/" holds every
// path. It is the one longest-prefix rule of the box (an origin's exports,
// a cache's routes, the auth namespaces, the metrics labels, the store mux).
//
// The zero value is an empty table. A table is not safe for concurrent
// Add; lookups after the last Add may run in parallel.
type PrefixTable[V any] struct {
	entries []prefixEntry[V] // longest prefix first; equal lengths in Add order
}

type prefixEntry[V any] struct {
	prefix string
	v      V
}

// Add maps prefix (a clean path) to v. Of two equal prefixes the one added
// first wins.
func (t *PrefixTable[V]) Add(prefix string, v V) {
	i := sort.Search(len(t.entries), func(i int) bool { return len(t.entries[i].prefix) < len(prefix) })
	t.entries = append(t.entries, prefixEntry[V]{})
	copy(t.entries[i+1:], t.entries[i:])
	t.entries[i] = prefixEntry[V]{prefix, v}
}

// Match returns the longest prefix holding the clean path p, and its value.
func (t *PrefixTable[V]) Match(p string) (prefix string, v V, ok bool) {
	for _, e := range t.entries {
		if HasPrefix(p, e.prefix) {
			return e.prefix, e.v, true
		}
	}
	return "", v, false
}

// Lookup returns the value of the longest prefix holding the clean path p.
func (t *PrefixTable[V]) Lookup(p string) (V, bool) {
	_, v, ok := t.Match(p)
	return v, ok
}

// Len is the number of prefixes.
func (t *PrefixTable[V]) Len() int { return len(t.entries) }

// All yields the prefixes and their values, longest prefix first.
func (t *PrefixTable[V]) All() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		for _, e := range t.entries {
			if !yield(e.prefix, e.v) {
				return
			}
		}
	}
}

// Prefixes lists the prefixes, longest first.
func (t *PrefixTable[V]) Prefixes() []string {
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.prefix
	}
	return out
}

// Children lists, sorted, the next path element of every prefix strictly
// below p: the virtual directories p shows when only deeper prefixes exist.
func (t *PrefixTable[V]) Children(p string) []string {
	return ChildrenBelow(p, t.Prefixes())
}
