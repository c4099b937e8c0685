package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"sitebox/internal/cache"
	"sitebox/internal/store"
)

// Cache is what the admin API needs from the caching proxy; *cache.Cache
// implements it.
type Cache interface {
	Stats() cache.Stats
	// EntriesPage lists, in path order, up to limit cached files at or
	// below prefix whose path sorts after `after`; a page shorter than
	// limit is the last. It costs the page, not every cached file.
	EntriesPage(prefix, after string, limit int) ([]cache.EntryInfo, error)
	// Evict drops the cached copy of path or of everything below it. Its
	// error wraps store.ErrNotFound when nothing is cached there and
	// store.ErrBusy when files are open.
	Evict(ctx context.Context, path string) error
}

// EvictResult answers POST /cache/evict.
type EvictResult struct {
	Path string `json:"path"`
	// Files are the cached files below Path as listed just before the
	// eviction (a file cached meanwhile may be missing).
	Files []cache.EntryInfo `json:"files"`
	Bytes int64             `json:"bytes"` // their cached bytes, now freed
}

// errNoCache answers the cache endpoints on a box without the cache role.
var errNoCache = errors.New("this box runs no cache")

func (s *Server) withCache(h func(http.ResponseWriter, *http.Request, Cache)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cache == nil {
			writeError(w, http.StatusNotFound, errNoCache)
			return
		}
		h(w, r, s.cache)
	}
}

func (s *Server) stats(w http.ResponseWriter, _ *http.Request, c Cache) {
	writeJSON(w, http.StatusOK, c.Stats())
}

// DefaultListPage is the page size of GET /cache/ls without limit: a
// cache of a million files answers a page at a time, each call costing
// its page; clients ask for the next with after=<last path>.
const DefaultListPage = 1000

func (s *Server) ls(w http.ResponseWriter, r *http.Request, c Cache) {
	q := r.URL.Query()
	prefix, after, limit, err := lsQuery(q.Get("prefix"), q.Get("after"), q.Get("limit"))
	if err == nil {
		var es []cache.EntryInfo
		if es, err = c.EntriesPage(prefix, after, limit); err == nil {
			writeJSON(w, http.StatusOK, append([]cache.EntryInfo{}, es...))
			return
		}
	}
	s.log.Info("cache ls refused", "query", r.URL.RawQuery, "error", err)
	writeError(w, statusOf(err), err)
}

// lsQuery checks the parameters of GET /cache/ls.
func lsQuery(prefix, after, limit string) (string, string, int, error) {
	p := "/"
	if prefix != "" {
		var err error
		if p, err = store.CleanPath(prefix); err != nil {
			return "", "", 0, err
		}
	}
	if after != "" {
		if a, err := store.CleanPath(after); err != nil || a != after {
			return "", "", 0, fmt.Errorf("%w: after=%q is not a path from a listing", store.ErrInvalid, after)
		}
	}
	n := DefaultListPage
	if limit != "" {
		var err error
		if n, err = strconv.Atoi(limit); err != nil || n < 1 || n > cache.MaxListPage {
			return "", "", 0, fmt.Errorf("%w: limit=%q: want a number from 1 to %d", store.ErrInvalid, limit, cache.MaxListPage)
		}
	}
	return p, after, n, nil
}

func (s *Server) evict(w http.ResponseWriter, r *http.Request, c Cache) {
	p, err := store.CleanPath(r.URL.Query().Get("path"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	res := EvictResult{Path: p, Files: []cache.EntryInfo{}}
	// The cache reports only success or failure, so what was evicted is
	// read from the listing beforehand: the files with blocks on disk.
	var es []cache.EntryInfo
	for after := ""; ; {
		page, err := c.EntriesPage(p, after, cache.MaxListPage)
		if err != nil {
			writeError(w, statusOf(err), err)
			return
		}
		es = append(es, page...)
		if len(page) < cache.MaxListPage {
			break
		}
		after = page[len(page)-1].Path
	}
	for _, e := range es {
		if e.Present > 0 {
			res.Files = append(res.Files, e)
			res.Bytes += e.CachedBytes
		}
	}
	if err := c.Evict(r.Context(), p); err != nil {
		code := statusOf(err)
		lvl := slog.LevelDebug // the operator's own mistake: the CLI shows it
		if code >= 500 {
			lvl = slog.LevelWarn
		}
		s.log.Log(r.Context(), lvl, "evict failed", "path", p, "error", err)
		writeError(w, code, err)
		return
	}
	s.log.Info("evicted", "path", p, "files", len(res.Files), "bytes", res.Bytes)
	writeJSON(w, http.StatusOK, res)
}

// storeCodes is the admin API's table between store sentinels and HTTP
// statuses: the server answers with them (any other error is a 500), the
// client reads them back (see StatusError.Unwrap). It is not WebDAV's
// (davstatus): here 409 Conflict means "files are open", nothing else.
var storeCodes = store.Codes[int]{
	{Code: http.StatusBadRequest, Err: store.ErrInvalid},
	{Code: http.StatusNotFound, Err: store.ErrNotFound},
	{Code: http.StatusConflict, Err: store.ErrBusy},
}

// statusOf is the status of a failed request.
func statusOf(err error) int {
	if code, ok := storeCodes.CodeOf(err); ok {
		return code
	}
	return http.StatusInternalServerError
}

type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorBody{Error: err.Error()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ") // read by people with curl too
	_ = enc.Encode(v)       // the client is gone if this fails
}
