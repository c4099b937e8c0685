package webdav

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// get serves GET and HEAD. http.ServeContent does the range work (single
// and multipart/byteranges, suffix and open ranges, 416) and conditional
// requests from the ETag and Last-Modified set here.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, name string) error {
	fi, err := h.store.Stat(r.Context(), name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return h.listing(w, r, name)
	}
	f, err := h.store.Open(r.Context(), name)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return err
	}
	if want := r.Header.Get("Want-Digest"); want != "" {
		if d, err := h.digest(r, name, want); err != nil {
			return err
		} else if d != "" {
			w.Header().Set("Digest", d)
		}
	}
	w.Header().Set("ETag", etag(fi))
	w.Header().Set("Content-Type", "application/octet-stream")
	http.ServeContent(w, r, "", fi.ModTime, io.NewSectionReader(f, 0, fi.Size))
	return nil
}

func etag(fi store.FileInfo) string {
	return fmt.Sprintf(`"%x-%x-%x"`, fi.ID, fi.Size, fi.ModTime.UnixNano())
}

// digest answers a Want-Digest header (RFC 3230): the supported algorithm
// the client prefers most, by q-value then order. Values are 8 hex digits,
// as XrdHttp sends for adler32 and crc32c.
func (h *Handler) digest(r *http.Request, name, want string) (string, error) {
	type choice struct {
		algo string
		q    float64
		pos  int
	}
	var cs []choice
	for i, part := range strings.Split(want, ",") {
		fields := strings.Split(part, ";")
		algo := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(f), "q="); ok {
				if x, err := strconv.ParseFloat(v, 64); err == nil {
					q = x
				}
			}
		}
		if _, err := cksum.Normalize(algo); err == nil && algo != "" && q > 0 {
			cs = append(cs, choice{algo, q, i})
		}
	}
	if len(cs) == 0 {
		return "", nil // nothing we compute: RFC 3230 says just omit Digest
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].q > cs[j].q })
	sum, err := h.store.Checksum(r.Context(), name, cs[0].algo)
	if err != nil {
		return "", err
	}
	return cs[0].algo + "=" + sum, nil
}

// listing renders a directory as a small HTML page for browsers.
func (h *Handler) listing(w http.ResponseWriter, r *http.Request, name string) error {
	entries, err := h.store.List(r.Context(), name)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method == http.MethodHead {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><title>%s</title><h1>%s</h1><ul>\n", html.EscapeString(name), html.EscapeString(name))
	for _, e := range entries {
		href := (&url.URL{Path: path.Join(name, e.Name)}).EscapedPath()
		label := e.Name
		if e.IsDir() {
			label += "/"
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a> %d</li>\n", href, html.EscapeString(label), e.Size)
	}
	b.WriteString("</ul>\n")
	io.WriteString(w, b.String())
	return nil
}
