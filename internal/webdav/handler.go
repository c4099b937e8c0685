// Package webdav serves a store.Store over HTTP(S) the way grid HTTP clients
// expect (curl, davix, gfal, uproot, XrdHttp users): GET with ranges, HEAD,
// PROPFIND, PUT, DELETE, MKCOL, MOVE and RFC 3230 checksums (Want-Digest).
package webdav

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"sitebox/internal/accesslog"
	"sitebox/internal/auth"
	"sitebox/internal/store"
	"sitebox/internal/tpc"
)

// Config tunes the handler: the [https] settings of the config file and
// what the box adds at run time. The zero value is valid.
type Config struct {
	// Settings are [https] as the file gives them. The handler acts on
	// BodyTimeout: an upload's body that goes that long without a byte
	// (default 1 minute) is abandoned with 408 and leaves nothing behind.
	// The listener's settings are the box's to act on.
	Settings
	// ReadOnly refuses PUT, DELETE, MKCOL and MOVE with 403.
	ReadOnly bool
	// ServerName is sent in the Server header (default "sitebox").
	ServerName string
	// Auth verifies the credentials of the Authorization header: bearer
	// tokens (Authorization: Bearer, ?authz=; ignored when it takes
	// none) and Kerberos ("Authorization: Negotiate", offered when it
	// takes Kerberos tickets, see negotiate.go). Nil: none.
	Auth *auth.Authenticator
	// Certificates has the client certificate chain a TLS client
	// presented verified, by the same authenticator, once per connection
	// (clientcert.go). Nil: certificates are ignored.
	Certificates *ClientCerts
	// Observer is told of the bytes moved, for metrics. Nil: none.
	Observer store.TransferObserver
	// AccessLog takes one line per GET and PUT. Nil: none.
	AccessLog accesslog.Sink
	// Self reports whether a host:port names this server by another name
	// than the one a request came with (its listeners' addresses, names
	// resolving to them): a MOVE or COPY Destination naming it is a path
	// here, not another server. Nil: only the request's own host is.
	Self func(hostport string) bool
	// TPC reaches the other server of a third-party copy (COPY with
	// Source: or a Destination: elsewhere). Nil: such copies are refused
	// with 400, from which gfal2 falls back to streaming.
	TPC tpc.Remote
	// CopyBuffers bounds the memory of the copies this handler runs
	// (third-party and within the store); the box gives every frontend
	// the same one, so the bound is box-wide. Nil: a budget of this
	// handler's own (tpc.BufferMemoryFor(0)).
	CopyBuffers *tpc.Budget
}

// Handler is an http.Handler over a store. Safe for concurrent use.
type Handler struct {
	cfg   Config
	store store.Store
	log   *slog.Logger
	sends *sendBuffers // the buffers of GETs over TLS
}

// New returns a handler serving st; the URL path is the namespace path.
// log may be nil.
func New(cfg Config, st store.Store, log *slog.Logger) *Handler {
	if cfg.ServerName == "" {
		cfg.ServerName = "sitebox"
	}
	if cfg.CopyBuffers == nil {
		cfg.CopyBuffers = tpc.NewBudget(tpc.BufferMemoryFor(0))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, store: st, log: log, sends: &sendBuffers{}}
}

const allowed = "OPTIONS, GET, HEAD, PROPFIND, PUT, DELETE, MKCOL, MOVE, COPY"

// ServeHTTP dispatches on the method; every failure goes through fail so
// the status mapping lives in one place (errors.go).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", h.cfg.ServerName)
	if r.Method == http.MethodOptions {
		h.options(w)
		return
	}
	n, err := requestName(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	r = h.withRequest(r) // before any store call: directors route on it, policy checks it
	// A path ending in "/" names a directory or nothing (names.go).
	if err := h.checkName(r, n); err != nil {
		h.fail(w, r, err)
		return
	}
	name := n.Path
	w, r, logTransfer := h.logged(w, r, name)
	defer logTransfer()
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
	case "COPY":
		err = h.copyFile(w, r, name) // tpc.go: local COPY and HTTP-TPC
	default:
		err = &httpError{http.StatusMethodNotAllowed, r.Method + " is not supported; allowed: " + allowed}
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// options answers OPTIONS for any path, including "*": class 1 WebDAV
// (no locks), byte ranges.
func (h *Handler) options(w http.ResponseWriter) {
	w.Header().Set("DAV", "1")
	w.Header().Set("Allow", allowed)
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

// requestName takes the namespace name from the URL. The escaped path is
// decoded exactly once here, so "%2e%2e" and "%00" meet the same checks as
// ".." and NUL in store.CleanPath; the query string (XRootD-style opaque
// data, tokens) is never part of the path. The name keeps a trailing "/"
// or "/." (store.Name), which checkName enforces.
func requestName(r *http.Request) (store.Name, error) {
	return nameFromURL(r.URL)
}

func nameFromURL(u *url.URL) (store.Name, error) {
	raw := u.EscapedPath()
	if raw == "" {
		raw = "/"
	}
	if !strings.HasPrefix(raw, "/") {
		return store.Name{}, fmt.Errorf("%w: path %q does not start with /", store.ErrInvalid, raw)
	}
	if err := refuseEncodedSlash(raw); err != nil { // slash.go
		return store.Name{}, err
	}
	p, err := url.PathUnescape(raw)
	if err != nil {
		return store.Name{}, fmt.Errorf("%w: bad percent-escape in path", store.ErrInvalid)
	}
	return store.ParseName(p)
}

// namespace returns the store's namespace operations for a modifying
// request, or the error that refuses it.
func (h *Handler) namespace(op, name string) (store.Namespace, error) {
	if h.cfg.ReadOnly {
		return nil, &store.PathError{Op: op, Path: name, Err: store.ErrReadOnly}
	}
	ns, ok := store.As[store.Namespace](h.store)
	if !ok {
		return nil, &store.PathError{Op: op, Path: name, Err: store.ErrUnsupported}
	}
	return ns, nil
}

// uploadPrefix starts the names of PUT's temporary files. Listings hide
// them so a half-done upload is never visible as a file.
const uploadPrefix = ".sitebox-upload-"

func hidden(name string) bool { return strings.HasPrefix(name, uploadPrefix) }
