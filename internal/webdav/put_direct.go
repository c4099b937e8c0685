package webdav

import (
	"errors"
	"net/http"

	"sitebox/internal/store"
)

// putDirect uploads to a store without namespace operations, such as a
// director. With no rename there is no temporary file: Create alone
// decides, and a director routes it to the origin that takes the upload
// (a redirect sent before any of the body is read). A store that does
// hand out a file gets the body written in place; it cannot be atomic.
func (h *Handler) putDirect(w http.ResponseWriter, r *http.Request, name string) error {
	if im := r.Header.Get("If-Match"); im != "" {
		answered, err := h.route(w, r, store.Call{Op: "stat", Path: name})
		if answered {
			return nil
		}
		var fi store.FileInfo
		if err == nil {
			fi, err = h.store.Stat(r.Context(), name)
		}
		if errors.Is(err, store.ErrNotFound) || (err == nil && !etagMatches(im, etag(fi))) {
			return &httpError{http.StatusPreconditionFailed, "put " + name + ": If-Match does not match the current file"}
		}
		if err != nil {
			return err
		}
	}
	opts := store.CreateOptions{Truncate: true, MkParents: true, Exclusive: r.Header.Get("If-None-Match") == "*"}
	if answered, err := h.route(w, r, store.Call{Op: "create", Path: name, Create: opts}); answered || err != nil {
		return err
	}
	unlock, err := store.LockWriter(h.store, name, r)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := store.Create(r.Context(), h.store, name, opts)
	if err != nil {
		return err
	}
	n, err := h.receiveBody(w, r, f, name)
	if err != nil {
		return err
	}
	h.log.Debug("put in place", "path", name, "bytes", n)
	h.received(r, name, n)
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
	return nil
}
