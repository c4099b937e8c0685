package webdav

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"sitebox/internal/dio"
	"sitebox/internal/store"
)

// putBuffer is the size of the writes PUT makes to the store: large enough
// that a WriteAt per buffer costs nothing next to the network.
const putBuffer = 1 << 20

// put streams the body into a temporary file next to the target and renames
// it into place only when the whole body arrived, so an interrupted or short
// upload never leaves a truncated file under the real name (and never
// damages the file it was meant to replace). 201 for a new file, 204 for a
// replaced one.
//
// Nothing here reads the body before the store has had its say, so a
// director's redirect (307, which keeps the method) reaches the client
// before it has sent the data.
func (h *Handler) put(w http.ResponseWriter, r *http.Request, name string) error {
	if h.cfg.ReadOnly {
		return &store.PathError{Op: "put", Path: name, Err: store.ErrReadOnly}
	}
	if r.Header.Get("Content-Range") != "" {
		// RFC 9110 section 14.5: a server that does not do partial PUT must
		// answer 400 rather than store the range as the whole file.
		return badRequest("partial PUT (Content-Range) is not supported; upload the whole file")
	}
	if _, ok := store.As[store.Namespace](h.store); !ok {
		return h.putDirect(w, r, name)
	}
	ns, err := h.namespace("put", name)
	if err != nil {
		return err
	}
	if answered, err := h.route(w, r, store.Call{Op: "stat", Path: name}); answered || err != nil {
		return err
	}
	existed := false
	fi, err := h.store.Stat(r.Context(), name)
	switch {
	case err == nil && fi.IsDir():
		return &store.PathError{Op: "put", Path: name, Err: store.ErrIsDir}
	case err == nil:
		existed = true
	case !errors.Is(err, store.ErrNotFound):
		return err
	}
	if existed && r.Header.Get("If-None-Match") == "*" {
		return &store.PathError{Op: "put", Path: name, Err: fmt.Errorf("%w (If-None-Match: *)", store.ErrExist)}
	}
	if im := r.Header.Get("If-Match"); im != "" && (!existed || !etagMatches(im, etag(fi))) {
		return &httpError{http.StatusPreconditionFailed, "put " + name + ": If-Match does not match the current file"}
	}
	// One writer per file, whichever protocol it comes by (423 as
	// XrdHttp answers), held until the upload has its name.
	unlock, err := store.LockWriter(h.store, name, r)
	if err != nil {
		return err
	}
	defer unlock()
	tmp, err := tempName(name)
	if err != nil {
		return err
	}
	f, err := store.Create(r.Context(), h.store, tmp, store.CreateOptions{Exclusive: true, MkParents: true, Final: name})
	if err != nil {
		return withPath(err, "put", name, tmp)
	}
	n, err := h.receiveBody(w, r, f, name)
	if err == nil {
		err = store.Land(r.Context(), f, ns, tmp, name)
	}
	if err != nil {
		// The client may be gone and its context cancelled: clean up anyway.
		if rerr := store.Discard(context.WithoutCancel(r.Context()), f, ns, tmp); rerr != nil && !errors.Is(rerr, store.ErrNotFound) {
			h.log.Warn("cannot remove failed upload", "path", tmp, "err", rerr)
		}
		if swe := (*storeWriteError)(nil); errors.As(err, &swe) {
			h.failMidUpload(w, r, withPath(swe.err, "put", name, tmp))
			return nil
		}
		return withPath(err, "put", name, tmp)
	}
	h.log.Debug("put", "path", name, "bytes", n, "replaced", existed)
	h.received(r, name, n)
	w.Header().Set("Content-Length", "0")
	answerStored(w, existed)
	return nil
}

// received counts an upload that landed.
func (h *Handler) received(r *http.Request, name string, n int64) {
	if h.cfg.Observer != nil {
		h.cfg.Observer.Transferred(store.RequestFrom(r.Context()), name, true, n)
	}
}

// etagMatches reports whether an If-Match list names tag (or is "*").
func etagMatches(list, tag string) bool {
	for t := range strings.SplitSeq(list, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// tempName is a fresh hidden name in name's directory; short, so that a
// target name near the 255-byte limit still has a valid temporary.
func tempName(name string) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("put: random name: %w", err)
	}
	return path.Join(path.Dir(name), uploadPrefix+hex.EncodeToString(rnd[:])), nil
}

// withPath makes store errors about the temporary name speak of the name
// the client asked for, so clients never see our internal file names.
func withPath(err error, op, name, tmp string) error {
	return store.Renamed(err, op, tmp, name)
}

// copyBody writes all of r's body to f from offset 0, reading with a
// deadline that moves with progress (BodyTimeout). The buffer starts at
// firstPutBuffer and doubles each time the body fills it, up to putBuffer,
// so a trickling upload holds little memory. Read failures are the
// client's (clientBodyError → 400, stallError → 408, MaxBytesError → 413);
// write failures are the store's.
func (h *Handler) copyBody(w http.ResponseWriter, r *http.Request, f store.WritableFile) (int64, error) {
	body := newProgressBody(w, r.Body, h.cfg.bodyTimeout())
	defer body.done()
	// Whole buffers go to a local disk past the page cache (see
	// dio.Writer); the buffers are aligned for it.
	direct := store.DirectWriter(f)
	defer direct.Close()
	buf := dio.Buf(firstPutBuffer)
	var off int64
	for {
		n, rerr := fill(body, buf)
		if n > 0 && !direct.WriteAt(buf[:n], off) {
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return off, &storeWriteError{err}
			}
		}
		off += int64(n)
		switch {
		case rerr == nil:
			if len(buf) < putBuffer {
				buf = dio.Buf(int64(2 * len(buf)))
			}
		case rerr == io.EOF:
			return off, nil
		default:
			var mbe *http.MaxBytesError
			var se *stallError
			if errors.As(rerr, &mbe) || errors.As(rerr, &se) {
				return off, rerr
			}
			return off, &clientBodyError{rerr}
		}
	}
}

// fill reads into buf until it is full or r fails; unlike io.ReadFull it
// passes r's own error through, so a clean io.EOF stays distinguishable
// from a body cut short (io.ErrUnexpectedEOF from net/http).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// receiveBody writes the request body into f, checks it is whole
// (Content-Length), and closes f; n is the bytes written.
func (h *Handler) receiveBody(w http.ResponseWriter, r *http.Request, f store.WritableFile, name string) (n int64, err error) {
	if err = insecure(r, f, "put", name); err == nil {
		n, err = h.copyBody(w, r, f)
	}
	if err == nil && r.ContentLength >= 0 && n != r.ContentLength {
		err = &clientBodyError{fmt.Errorf("%w: got %d of %d bytes", io.ErrUnexpectedEOF, n, r.ContentLength)}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return n, err
}
