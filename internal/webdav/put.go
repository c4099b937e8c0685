package webdav

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"

	"sitebox/internal/store"
)

// put streams the body into a temporary file next to the target and renames
// it into place only when the whole body arrived, so an interrupted upload
// never leaves a truncated file under the real name.
func (h *Handler) put(w http.ResponseWriter, r *http.Request, name string) error {
	ns, err := h.namespace("put", name)
	if err != nil {
		return err
	}
	existed := false
	if fi, err := h.store.Stat(r.Context(), name); err == nil {
		if fi.IsDir() {
			return &store.PathError{Op: "put", Path: name, Err: store.ErrIsDir}
		}
		existed = true
		if r.Header.Get("If-None-Match") == "*" {
			return &store.PathError{Op: "put", Path: name, Err: store.ErrExist}
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(name), ".sitebox-upload-"+hex.EncodeToString(rnd[:])+"-"+path.Base(name))
	f, err := h.store.Create(r.Context(), tmp, store.CreateOptions{Exclusive: true, MkParents: true})
	if err != nil {
		return err
	}
	n, err := io.Copy(&offsetWriter{w: f}, r.Body)
	if err == nil && r.ContentLength >= 0 && n != r.ContentLength {
		err = &httpError{http.StatusBadRequest, fmt.Sprintf("body ended after %d of %d bytes", n, r.ContentLength)}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ns.Rename(r.Context(), tmp, name)
	}
	if err != nil {
		ns.Remove(context.WithoutCancel(r.Context()), tmp)
		return err
	}
	if existed {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}

// offsetWriter turns an io.WriterAt into a sequential io.Writer.
type offsetWriter struct {
	w   io.WriterAt
	off int64
}

func (o *offsetWriter) Write(p []byte) (int, error) {
	n, err := o.w.WriteAt(p, o.off)
	o.off += int64(n)
	return n, err
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, name string) error {
	ns, err := h.namespace("delete", name)
	if err != nil {
		return err
	}
	fi, err := h.store.Stat(r.Context(), name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		err = ns.Rmdir(r.Context(), name)
	} else {
		err = ns.Remove(r.Context(), name)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) mkcol(w http.ResponseWriter, r *http.Request, name string) error {
	ns, err := h.namespace("mkcol", name)
	if err != nil {
		return err
	}
	if r.ContentLength > 0 {
		return &httpError{http.StatusUnsupportedMediaType, "MKCOL with a body is not supported"}
	}
	if _, err := h.store.Stat(r.Context(), name); err == nil {
		return &httpError{http.StatusMethodNotAllowed, name + " already exists"}
	}
	if err := ns.Mkdir(r.Context(), name, 0o755, false); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &httpError{http.StatusConflict, "parent of " + name + " does not exist"}
		}
		return err
	}
	w.WriteHeader(http.StatusCreated)
	return nil
}

// move renames within this server; Destination may be an absolute URL or a
// path. Overwrite: F refuses an existing destination.
func (h *Handler) move(w http.ResponseWriter, r *http.Request, name string) error {
	ns, err := h.namespace("move", name)
	if err != nil {
		return err
	}
	dest := r.Header.Get("Destination")
	if dest == "" {
		return &httpError{http.StatusBadRequest, "MOVE needs a Destination header"}
	}
	u, err := url.Parse(dest)
	if err != nil {
		return &httpError{http.StatusBadRequest, "bad Destination: " + err.Error()}
	}
	if u.Host != "" && u.Host != r.Host {
		return &httpError{http.StatusBadGateway, "Destination is on another server"}
	}
	to, err := store.CleanPath(u.Path)
	if err != nil {
		return err
	}
	_, statErr := h.store.Stat(r.Context(), to)
	existed := statErr == nil
	if existed && r.Header.Get("Overwrite") == "F" {
		return &httpError{http.StatusPreconditionFailed, to + " exists and Overwrite is F"}
	}
	if err := ns.Rename(r.Context(), name, to); err != nil {
		return err
	}
	if existed {
		w.WriteHeader(http.StatusNoContent)
	} else {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}
