package director

// pending is a search under way, as the lookups waiting on it see it.
type pending struct {
	asks     map[string]bool // the servers asked
	answered map[string]bool // root → holds it, for every server that answered or failed
	down     map[string]bool // the servers found unreachable
	has      []string        // the roots holding it, in the order they answered
	changed  chan struct{}   // closed, and replaced, at each answer
	done     chan struct{}   // closed once the search's result is recorded
	// cover, for a search of the servers the holdings filters point to,
	// is the registry's epoch its result answers for if it finds the
	// file (0: only what it was started with).
	cover uint64
}

// early lets a lookup answer before its search has heard from every
// server, as cmsd's manager redirects on the first server to say it has
// the file: once some candidate holds the path and every server in after
// (the candidates at the client's site, whose answers would change where
// the client goes) has answered. The search goes on and records the rest.
type early struct{ after []string }

// start joins the search for name under way if it asks every one of
// cands, or starts one asking cands, which later lookups join instead.
func (l *locator) start(name string, cands []string, epoch, cover uint64) *pending {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.running[name]; p != nil && asksAll(p, cands) && !foundDown(p, cands) {
		return p
	}
	p := &pending{asks: make(map[string]bool, len(cands)), answered: map[string]bool{}, down: map[string]bool{},
		changed: make(chan struct{}), done: make(chan struct{}), cover: cover}
	for _, c := range cands {
		p.asks[c] = true
	}
	if l.running == nil {
		l.running = map[string]*pending{}
	}
	l.running[name] = p
	go l.search(name, cands, epoch, p)
	return p
}

// foundDown reports whether the search p found one of cands down. Such a
// server is a candidate again only because it came back since (a server
// found down is no longer eligible), so p's answer for it is stale: a
// lookup joining p would not ask the server it may prefer.
func foundDown(p *pending, cands []string) bool {
	for _, c := range cands {
		if p.down[c] {
			return true
		}
	}
	return false
}

func asksAll(p *pending, cands []string) bool {
	for _, c := range cands {
		if !p.asks[c] {
			return false
		}
	}
	return true
}

// enough returns the holders among in found by the search p if they
// satisfy e, else nil and a channel closed at the search's next answer
// (nil without e: only the end of the search matters then).
func (l *locator) enough(p *pending, in map[string]bool, e *early) ([]string, <-chan struct{}) {
	if e == nil {
		return nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var has []string
	for _, r := range p.has {
		if in[r] {
			has = append(has, r)
		}
	}
	if len(has) == 0 {
		return nil, p.changed
	}
	for _, r := range e.after {
		if _, ok := p.answered[r]; !ok {
			return nil, p.changed
		}
	}
	return has, nil
}

// heard records one answer of the search p for the lookups waiting on it.
func (l *locator) heard(p *pending, a probeAnswer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p.answered[a.root] = a.has
	if a.down {
		p.down[a.root] = true
	}
	if a.has {
		p.has = append(p.has, a.root)
	}
	close(p.changed)
	p.changed = make(chan struct{})
}
