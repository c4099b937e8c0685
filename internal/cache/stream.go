package cache

// uncheckAheadLocked forgets the checks of the pages from page p on that
// a stream read may bring into the page cache by read-ahead. Called with
// e.mu held.
func (e *entry) uncheckAheadLocked(p int) {
	m := e.m
	if m == nil {
		return
	}
	m.UncheckRange(p, min(p+int((e.c.disk.StreamReach()+m.PageSize()-1)/m.PageSize()), m.Pages()))
}
