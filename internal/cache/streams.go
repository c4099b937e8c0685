package cache

// Which of an upstream's streams (connections) a fetch or an open goes to.

// take returns the stream of u where a fetch costs least, and counts the
// fetch on it: cost(si) is what the stream adds beyond the fetches in
// flight there (see streamCost). Of equals, the one adding least (the
// file open there already), then round-robin, so a burst of fetches
// spreads over every stream (a server answers one read per connection at
// a time).
func (u *upstream) take(cost func(si int) int) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	best, least, added := -1, 0, 0
	for k := range u.busy {
		i := (u.next + k) % len(u.busy)
		a := cost(i)
		if c := u.busy[i] + a; best < 0 || c < least || c == least && a < added {
			best, least, added = i, c, a
		}
	}
	u.busy[best]++
	u.next = best + 1
	return best
}

// streamCost prices the streams of upstream ui for a fetch of e, in
// fetches in flight: nothing where e's file is open; open where it must
// be opened first, or an open under way must finish (an upstream open
// costs a round trip, as much as the read it precedes: a scattered
// reader touching a file on every stream paid it on a quarter of its
// reads); three times that on a stream not connected, which must dial
// and log in first. Reusing a handle also saves a file descriptor
// upstream.
func (e *entry) streamCost(ui int, u *upstream, open int) func(si int) int {
	return func(si int) int {
		switch e.up.state(ui, si) {
		case handleReady:
			return 0
		case handleOpening:
			return open
		}
		if connected(u.Streams[si]) {
			return open
		}
		return 3 * open
	}
}

func (u *upstream) done(si int) {
	u.mu.Lock()
	u.busy[si]--
	u.mu.Unlock()
}

// openCost prices the streams of e's first upstream u for opening e's
// file: the least busy connected stream not holding it, unless all such
// are busier by a few fetches than one that must dial and log in first
// (two round trips or more). A stream holding the file already costs
// most: a second handle there is closed unused.
func (e *entry) openCost(u *upstream) func(si int) int {
	return func(si int) int {
		switch {
		case e.up.has(0, si):
			return 1 << 20
		case connected(u.Streams[si]):
			return 0
		}
		return 2 * groupSlack
	}
}
