package cache

import (
	"slices"
	"strings"
	"time"

	"sitebox/internal/cache/blockmap"
	"sitebox/internal/cache/index"
	"sitebox/internal/store"
)

// recordOf summarises the block map m of path p for the index.
func recordOf(p string, m *blockmap.Map) *index.Record {
	return &index.Record{
		Path: p, Size: m.Size(), Cached: m.CachedBytes(), Present: int32(m.Count()),
		MTime: m.MTime().UnixNano(), ATime: m.LastAccess.UnixNano(), Validated: m.Validated.UnixNano(),
	}
}

// recordInfo describes an idle file for `cache ls`.
func recordInfo(r *index.Record, blockSize int64) EntryInfo {
	return EntryInfo{
		Path: r.Path, Size: r.Size, CachedBytes: r.Cached,
		Blocks: int((r.Size + blockSize - 1) / blockSize), Present: int(r.Present),
		ModTime: time.Unix(0, r.MTime), LastAccess: time.Unix(0, r.ATime),
	}
}

// liveEntries returns the entries in memory: the files in use or used
// within the last UpstreamIdle, however many files the cache holds.
func (c *Cache) liveEntries() []*entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	es := make([]*entry, 0, len(c.entries))
	for _, e := range c.entries {
		es = append(es, e)
	}
	return es
}

// liveInfo describes e for `cache ls`, and reports whether it holds
// anything worth listing (blocks on disk, or a client has it open).
func (c *Cache) liveInfo(e *entry, opens int) (EntryInfo, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil || e.m.Count() == 0 && opens == 0 {
		return EntryInfo{}, false
	}
	return EntryInfo{
		Path: e.path, Size: e.m.Size(), CachedBytes: e.m.CachedBytes(),
		Blocks: e.m.Blocks(), Present: e.m.Count(),
		ModTime: e.m.MTime(), LastAccess: e.m.LastAccess, Open: opens,
	}, true
}

// MaxListPage caps one page of EntriesPage.
const MaxListPage = 100_000

// EntriesPage lists, in path order, up to limit cached files at or below
// prefix whose path sorts after `after` ("" for the first page; the last
// path of a page for the next). A page shorter than limit is the last.
// Its cost is the page's, plus the files in use: never the total.
func (c *Cache) EntriesPage(prefix, after string, limit int) ([]EntryInfo, error) {
	p, err := store.CleanPath(prefix)
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), MaxListPage)
	type held struct {
		e     *entry
		opens int
	}
	c.mu.Lock()
	var live []held
	for _, e := range c.entries {
		if e.path > after && store.HasPrefix(e.path, p) {
			live = append(live, held{e, e.opens})
		}
	}
	idle := make([]EntryInfo, 0, min(limit, c.idx.Len()))
	c.idx.Below(p, after, func(r *index.Record) bool {
		idle = append(idle, recordInfo(r, c.cfg.BlockSize.Bytes()))
		return len(idle) < limit
	})
	c.mu.Unlock()
	out := idle
	for _, h := range live {
		if info, ok := c.liveInfo(h.e, h.opens); ok {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b EntryInfo) int { return strings.Compare(a.Path, b.Path) })
	// Entries cannot fill the page past the last idle record it read:
	// a file after it may come before the next page's first.
	if len(idle) == limit {
		last := idle[len(idle)-1].Path
		out = slices.DeleteFunc(out, func(i EntryInfo) bool { return i.Path > last })
	}
	return out[:min(len(out), limit)], nil
}

// Entries lists every cached file, page by page (for tests and small
// caches; `cache ls` asks for pages).
func (c *Cache) Entries() []EntryInfo {
	var all []EntryInfo
	after := ""
	for {
		page, _ := c.EntriesPage("/", after, MaxListPage)
		all = append(all, page...)
		if len(page) < MaxListPage {
			return all
		}
		after = page[len(page)-1].Path
	}
}
