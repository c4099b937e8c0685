package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"sitebox/internal/cache"
	"sitebox/internal/store"
)

// Cache is what the admin API needs from the caching proxy; *cache.Cache
// implements it.
type Cache interface {
	Stats() cache.Stats
	// Entries lists every cached file.
	Entries() []cache.EntryInfo
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

func (s *Server) ls(w http.ResponseWriter, r *http.Request, c Cache) {
	prefix := "/"
	if q := r.URL.Query().Get("prefix"); q != "" {
		p, err := store.CleanPath(q)
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		prefix = p
	}
	writeJSON(w, http.StatusOK, below(c.Entries(), prefix))
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
	for _, e := range below(c.Entries(), p) {
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

// below returns the entries at or under prefix, never nil so that JSON
// shows an empty list rather than null.
func below(all []cache.EntryInfo, prefix string) []cache.EntryInfo {
	out := []cache.EntryInfo{}
	for _, e := range all {
		if store.HasPrefix(e.Path, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// statusOf maps the store's sentinel errors to HTTP statuses; the client
// maps them back (see StatusError.Unwrap).
func statusOf(err error) int {
	switch {
	case errors.Is(err, store.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrBusy):
		return http.StatusConflict
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
