package webdav

import (
	"net/http"
	"strings"

	"sitebox/internal/store"
)

// checkName enforces, before a method acts or is routed, what a path
// written as a directory says (store.Name.Check): GET /f/ does not serve
// the file f, PUT /f/ does not replace it, DELETE /f/ does not remove it.
// MKCOL makes a directory however its path ends, as XrdHttp does.
func (h *Handler) checkName(r *http.Request, n store.Name) error {
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet, http.MethodHead, "PROPFIND":
		return n.Check(ctx, h.store, strings.ToLower(r.Method), store.Inspect)
	case http.MethodPut:
		return n.Check(ctx, h.store, "put", store.CreateFile)
	case http.MethodDelete:
		return n.Check(ctx, h.store, "delete", store.Unlink)
	case "MOVE", "COPY":
		return h.checkMove(r, n)
	}
	return nil
}

// checkMove checks the names of a MOVE or COPY: a pulled copy writes a
// file at n; a move or copy within this server checks both names
// (store.CheckMove); one pushed elsewhere leaves the destination to the
// server that receives it.
func (h *Handler) checkMove(r *http.Request, n store.Name) error {
	ctx, op := r.Context(), strings.ToLower(r.Method)
	if r.Method == "COPY" && strings.TrimSpace(r.Header.Get("Source")) != "" {
		return n.Check(ctx, h.store, op, store.CreateFile)
	}
	to, err := h.destinationName(r) // dav.go
	if err != nil {
		// A Destination elsewhere, or a bad one the method answers.
		in := store.Inspect
		if r.Method == "MOVE" {
			in = store.Unlink
		}
		return n.Check(ctx, h.store, op, in)
	}
	if to.Dir && !to.Dot {
		// A collection's URL ends in "/" (RFC 4918 section 5.2); naming an
		// existing one so says nothing more, and MOVE or COPY replaces it
		// with whatever the source is (Overwrite: T; F is refused later).
		if fi, err := h.store.Stat(ctx, to.Path); err == nil && fi.IsDir() {
			to.Dir = false
		}
	}
	return store.CheckMove(ctx, h.store, op, n, to, r.Method == "MOVE")
}

// spelled is the path a redirect sends the client to for the request
// path p: as the client wrote it, so that a trailing "/" or "/." reaches
// the server that acts on it.
func spelled(r *http.Request, p string) string {
	if n, err := requestName(r); err == nil && n.Path == p {
		return n.String()
	}
	return p
}
