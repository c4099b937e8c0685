package webdav

import (
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"path"
	"strings"

	"sitebox/internal/store"
)

// get serves GET and HEAD in one pass through the store: routed (only
// by a store that routes), then opened, the open file describing itself;
// a directory, which Open refuses with ErrIsDir, is listed.
// http.ServeContent does the range work (single and multipart/byteranges,
// suffix and open ranges, 416 with "Content-Range: bytes */size") and
// the conditional requests, from the ETag and Last-Modified set here.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, name string) error {
	if answered, err := h.route(w, r, store.Call{Op: "stat", Path: name}); answered || err != nil {
		return err
	}
	f, err := h.store.Open(r.Context(), name)
	if errors.Is(err, store.ErrIsDir) {
		return h.listing(w, r, name)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return h.listing(w, r, name) // a store that opens directories
	}
	if r.Method != http.MethodHead {
		if err := insecure(r, f, "get", name); err != nil {
			return err
		}
	}
	d, err := h.digest(r, name)
	if err != nil {
		return err
	}
	if d != "" {
		w.Header().Set("Digest", d)
	}
	w.Header().Set("ETag", etag(fi))
	w.Header().Set("Content-Type", "application/octet-stream")
	content, done := contentOf(f, fi.Size)
	defer done()
	if obs := h.cfg.Observer; obs != nil && r.Method == http.MethodGet {
		cw := &countingWriter{ResponseWriter: w}
		defer func() { obs.Transferred(store.RequestFrom(r.Context()), name, false, cw.n) }()
		w = cw
	}
	if r.TLS != nil {
		w = sendWriter{ResponseWriter: w, bufs: h.sends} // plain HTTP keeps sendfile
	}
	normalizeRange(r, fi.Size)
	http.ServeContent(w, r, "", fi.ModTime, content)
	return nil
}

// countingWriter counts the body bytes of a response. It keeps
// io.ReaderFrom, so plain-HTTP responses still go out with sendfile.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(r)
		c.n += n
		return n, err
	}
	n, err := io.Copy(struct{ io.Writer }{c}, r)
	return n, err
}

// etag identifies one version of a file: it changes when the file is
// replaced (ID), rewritten (mtime) or resized.
func etag(fi store.FileInfo) string {
	return fmt.Sprintf(`"%x-%x-%x"`, fi.ID, fi.Size, fi.ModTime.UnixNano())
}

// sectionOf is the portable content for ServeContent: the first size bytes
// of f, read with ReadAt.
func sectionOf(f store.File, size int64) io.ReadSeeker {
	return io.NewSectionReader(f, 0, size)
}

// listing renders a directory as a small HTML page for browsers.
func (h *Handler) listing(w http.ResponseWriter, r *http.Request, name string) error {
	entries, err := h.store.List(r.Context(), name)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	var b strings.Builder
	title := html.EscapeString(name)
	fmt.Fprintf(&b, "<!doctype html>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<h1>%s</h1>\n<ul>\n", title, title)
	if name != "/" {
		b.WriteString("<li><a href=\"../\">../</a></li>\n")
	}
	for _, e := range entries {
		if hidden(e.Name) {
			continue
		}
		label, href := e.Name, escapePath(path.Join(name, e.Name))
		if e.IsDir() {
			label += "/"
			href += "/"
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a> %d</li>\n", html.EscapeString(href), html.EscapeString(label), e.Size)
	}
	b.WriteString("</ul>\n")
	_, err = io.WriteString(w, b.String())
	if err != nil {
		h.log.Debug("listing not delivered", "path", name, "err", err)
	}
	return nil
}
