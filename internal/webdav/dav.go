package webdav

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"sitebox/internal/store"
)

// delete removes a file, or a directory with everything in it (RFC 4918).
// A symbolic link is removed itself, never what it leads to (tree.go).
func (h *Handler) delete(w http.ResponseWriter, r *http.Request, name string) error {
	if name == "/" {
		return &httpError{http.StatusForbidden, "delete /: the namespace root cannot be deleted"}
	}
	if answered, err := h.route(w, r, store.Call{Op: "rm", Path: name}); answered || err != nil {
		return err
	}
	ns, err := h.namespace("delete", name)
	if err != nil {
		return err
	}
	ctx := store.NoFollow(r.Context())
	fi, err := h.store.Stat(ctx, name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if err = deleteDepth(r); err == nil {
			// Refused as a whole (read-only, no right to delete the
			// collection itself) before any member goes.
			err = store.Precheck(ctx, h.store, store.Call{Op: "rm", Path: name})
		}
		if err == nil {
			err = removeTree(ctx, h.store, ns, name, 0) // tree.go
		}
	} else {
		err = ns.Remove(ctx, name)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mkcol makes one directory: 201, 405 if the name exists, 409 if the parent
// does not (RFC 4918 section 9.3.1).
func (h *Handler) mkcol(w http.ResponseWriter, r *http.Request, name string) error {
	if answered, err := h.route(w, r, store.Call{Op: "mkdir", Path: name}); answered || err != nil {
		return err
	}
	ns, err := h.namespace("mkcol", name)
	if err != nil {
		return err
	}
	if r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
		return &httpError{http.StatusUnsupportedMediaType, "MKCOL with a body is not supported"}
	}
	if _, err := h.store.Stat(r.Context(), name); err == nil {
		return &httpError{http.StatusMethodNotAllowed, "mkcol " + name + ": already exists"}
	}
	if err := ns.Mkdir(r.Context(), name, 0o755, false); err != nil {
		switch {
		case errors.Is(err, store.ErrExist):
			return &httpError{http.StatusMethodNotAllowed, "mkcol " + name + ": already exists"}
		case errors.Is(err, store.ErrNotFound):
			return &httpError{http.StatusConflict, "mkcol " + name + ": parent directory does not exist"}
		}
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// move renames within this server. Destination may be an absolute URL (its
// host must be this server's) or an absolute path; Overwrite: F refuses an
// existing destination with 412. 201 when the destination is new, 204 when
// it was replaced. Everything that refuses the move is asked before the
// destination is replaced, so a refused MOVE changes nothing.
func (h *Handler) move(w http.ResponseWriter, r *http.Request, name string) error {
	if answered, err := h.route(w, r, store.Call{Op: "mv", Path: name}); answered || err != nil {
		return err
	}
	ns, err := h.namespace("move", name)
	if err != nil {
		return err
	}
	to, err := h.destination(r)
	if err != nil {
		return err
	}
	overwrite, err := overwriteHeader(r)
	if err != nil {
		return err
	}
	if name == "/" || to == "/" {
		return &httpError{http.StatusForbidden, "move: the namespace root cannot be moved or replaced"}
	}
	if err := overlap("move", name, to); err != nil {
		return err
	}
	ctx := store.NoFollow(r.Context())
	src, err := h.store.Stat(ctx, name)
	if err != nil {
		return err
	}
	dst, existed, err := h.destinationInfo(ctx, to, overwrite, "move "+name)
	if err != nil {
		return err
	}
	replace := existed && needsReplacing(src, dst)
	if err := h.precheckPlacing(ctx, store.Call{Op: "mv", Path: name, To: to}, to, replace); err != nil {
		return movedErr(err, name, to)
	}
	if replace {
		// RFC 4918 section 9.9.3: the destination is deleted first, as
		// DELETE would (a collection with all its members).
		if err := h.replaceTarget(ctx, ns, to, dst); err != nil {
			return err
		}
	}
	if err := ns.Rename(ctx, name, to); err != nil {
		return movedErr(err, name, to)
	}
	answerStored(w, existed)
	return nil
}

// destinationInfo stats the destination of a MOVE or COPY (not following
// a link: replacing one replaces the link): 412 when it exists and
// Overwrite is F.
func (h *Handler) destinationInfo(ctx context.Context, to string, overwrite bool, what string) (store.FileInfo, bool, error) {
	fi, err := h.store.Stat(ctx, to)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.FileInfo{}, false, nil
	case err != nil:
		return store.FileInfo{}, false, err
	case !overwrite:
		return fi, true, &httpError{http.StatusPreconditionFailed, what + ": " + to + " exists and Overwrite is F"}
	}
	return fi, true, nil
}

// precheckPlacing asks the store about every change a MOVE or COPY will
// make, before the first: deleting the destination it replaces, then
// putting the source there (c).
func (h *Handler) precheckPlacing(ctx context.Context, c store.Call, to string, replace bool) error {
	if replace {
		if err := store.Precheck(ctx, h.store, store.Call{Op: "rm", Path: to}); err != nil {
			return err
		}
	}
	return store.Precheck(ctx, h.store, c)
}

// movedErr answers a refused or failed rename: the source was statted, so
// what is missing is the destination's parent (RFC 4918 section 9.9.4:
// 409).
func movedErr(err error, name, to string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &httpError{http.StatusConflict, "move " + name + ": parent of " + to + " does not exist"}
	}
	return err
}

// destination returns the cleaned namespace path of the Destination header.
func (h *Handler) destination(r *http.Request) (string, error) {
	n, err := h.destinationName(r)
	return n.Path, err
}

// destinationName is the Destination header's name on this server.
func (h *Handler) destinationName(r *http.Request) (store.Name, error) {
	dest := strings.TrimSpace(r.Header.Get("Destination"))
	if dest == "" {
		return store.Name{}, badRequest("MOVE needs a Destination header")
	}
	u, err := url.Parse(dest)
	if err != nil {
		return store.Name{}, badRequest("bad Destination header: not a URL or path")
	}
	if !h.destHere(r, u) {
		return store.Name{}, &httpError{http.StatusBadGateway, "Destination " + u.Host + " is another server; MOVE works within one server"}
	}
	if u.Opaque != "" {
		return store.Name{}, badRequest("bad Destination header: not a URL or path")
	}
	return nameFromURL(u)
}

// destHereKey marks a MOVE or COPY a director sent on whose Destination
// named the director itself: the director's namespace is the servers',
// so the Destination's path is a path here. Forging it gains nothing: a
// Destination given as a bare path means the same.
const destHereKey = "sbx.dest"

// destHere reports whether the Destination URL u names this server: no
// host, the request's own host, another of this server's names (Self),
// or the director that sent the request.
func (h *Handler) destHere(r *http.Request, u *url.URL) bool {
	switch {
	case u.Host == "", strings.EqualFold(u.Host, r.Host), r.URL.Query().Get(destHereKey) == "here":
		return true
	case h.cfg.Self == nil:
		return false
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	return h.cfg.Self(host)
}

// destOpaque is the CGI a director adds to a redirected MOVE or COPY
// whose Destination names the director, so the server it goes to takes
// the Destination as its own path (destHere).
func (h *Handler) destOpaque(r *http.Request) string {
	if r.Method != "MOVE" && r.Method != "COPY" || r.Header.Get("Source") != "" {
		return ""
	}
	u, err := url.Parse(strings.TrimSpace(r.Header.Get("Destination")))
	if err != nil || !h.destHere(r, u) {
		return ""
	}
	return destHereKey + "=here"
}

// answerStored answers a request that put something at a name: 204 when
// it replaced what was there, 201 when the name is new (RFC 4918 for
// MOVE and COPY, RFC 9110 for PUT).
func answerStored(w http.ResponseWriter, replaced bool) {
	if replaced {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
}
