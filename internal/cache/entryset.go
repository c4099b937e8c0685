package cache

import (
	"sync"
)

// entrySet is a set of entries the flusher looks at (those with an open
// data file; those whose last access waits to be saved), however many
// files the cache holds. Its mutex is taken last, under any other.
type entrySet struct {
	mu sync.Mutex
	m  map[*entry]struct{}
}

func (s *entrySet) add(e *entry) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*entry]struct{}{}
	}
	s.m[e] = struct{}{}
	s.mu.Unlock()
}

func (s *entrySet) remove(e *entry) {
	s.mu.Lock()
	delete(s.m, e)
	s.mu.Unlock()
}

func (s *entrySet) snapshot() []*entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	es := make([]*entry, 0, len(s.m))
	for e := range s.m {
		es = append(es, e)
	}
	return es
}
