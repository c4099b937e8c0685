// Package webdav serves a store.Store over HTTP(S) the way grid HTTP clients
// expect (curl, davix, gfal, uproot, XrdHttp users): GET with ranges, HEAD,
// PROPFIND, PUT, DELETE, MKCOL, MOVE and RFC 3230 checksums.
package webdav

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// Config tunes the handler. The zero value is valid.
type Config struct {
	// ReadOnly refuses PUT, DELETE, MKCOL and MOVE.
	ReadOnly bool
	// ServerName is sent in the Server header (default "sitebox").
	ServerName string
}

// Handler is an http.Handler over a store. Safe for concurrent use.
type Handler struct {
	cfg   Config
	store store.Store
	log   *slog.Logger
}

// New returns a handler serving st. log may be nil.
func New(cfg Config, st store.Store, log *slog.Logger) *Handler {
	if cfg.ServerName == "" {
		cfg.ServerName = "sitebox"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, store: st, log: log}
}

const allowed = "OPTIONS, GET, HEAD, PROPFIND, PUT, DELETE, MKCOL, MOVE"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", h.cfg.ServerName)
	name, err := requestPath(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		err = h.get(w, r, name)
	case "PROPFIND":
		err = h.propfind(w, r, name)
	case http.MethodPut:
		err = h.put(w, r, name)
	case http.MethodDelete:
		err = h.delete(w, r, name)
	case "MKCOL":
		err = h.mkcol(w, r, name)
	case "MOVE":
		err = h.move(w, r, name)
	case http.MethodOptions:
		w.Header().Set("DAV", "1")
		w.Header().Set("Allow", allowed)
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Allow", allowed)
		http.Error(w, r.Method+" is not supported", http.StatusMethodNotAllowed)
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// requestPath takes the namespace path from the URL. The raw (escaped) path
// is decoded once here, so "%2e%2e" and "%00" meet the same checks as ".."
// and NUL; the query string is never part of the path.
func requestPath(r *http.Request) (string, error) {
	raw := r.URL.EscapedPath()
	p, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("%w: bad escape in path", store.ErrInvalid)
	}
	return store.CleanPath(p)
}

// statusOf is the one place store errors become HTTP statuses.
func statusOf(err error) int {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrReadOnly), errors.Is(err, store.ErrPermission):
		return http.StatusForbidden
	case errors.Is(err, store.ErrExist):
		return http.StatusPreconditionFailed
	case errors.Is(err, store.ErrIsDir), errors.Is(err, store.ErrNotDir), errors.Is(err, store.ErrNotEmpty):
		return http.StatusConflict
	case errors.Is(err, store.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrNoSpace):
		return http.StatusInsufficientStorage
	case errors.Is(err, store.ErrUnsupported), errors.Is(err, cksum.ErrUnknownAlgorithm):
		return http.StatusNotImplemented
	}
	var he *httpError
	if errors.As(err, &he) {
		return he.status
	}
	return http.StatusInternalServerError
}

// httpError carries a status for failures that are not store errors.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	code := statusOf(err)
	if code >= 500 {
		h.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	} else {
		h.log.Debug("request refused", "method", r.Method, "path", r.URL.Path, "status", code, "err", err)
	}
	http.Error(w, strings.TrimSpace(err.Error()), code)
}

func (h *Handler) namespace(op, name string) (store.Namespace, error) {
	if h.cfg.ReadOnly {
		return nil, &store.PathError{Op: op, Path: name, Err: store.ErrReadOnly}
	}
	ns, ok := h.store.(store.Namespace)
	if !ok {
		return nil, &store.PathError{Op: op, Path: name, Err: store.ErrUnsupported}
	}
	return ns, nil
}
