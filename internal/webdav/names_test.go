package webdav

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrailingSlash: a path ending in "/" or "/." names a directory or
// nothing. Every method refuses to act on a file through one, and leaves
// it as it was; directories work with or without the slash.
func TestTrailingSlash(t *testing.T) {
	srv, dir := newServer(t, Config{})
	base := srv.URL + "/store"
	for _, c := range []struct {
		method, path string
		hdr          []string
		want         int
	}{
		{http.MethodGet, "/f/", nil, http.StatusConflict},
		{http.MethodGet, "/f/.", nil, http.StatusConflict},
		{http.MethodHead, "/f/", nil, http.StatusConflict},
		{"PROPFIND", "/f/", []string{"Depth", "0"}, http.StatusConflict},
		{http.MethodPut, "/f/", nil, http.StatusConflict},
		{http.MethodPut, "/nx/", nil, http.StatusConflict},
		{http.MethodDelete, "/f/", nil, http.StatusConflict},
		{"MOVE", "/f/", []string{"Destination", base + "/g"}, http.StatusConflict},
		{"MOVE", "/f", []string{"Destination", base + "/g/"}, http.StatusConflict},
		{"COPY", "/f", []string{"Destination", base + "/g/"}, http.StatusConflict},
		{"MOVE", "/f", []string{"Destination", base + "/g/."}, http.StatusBadRequest},
		{http.MethodDelete, "/d/.", nil, http.StatusBadRequest},
		{http.MethodGet, "/nx/", nil, http.StatusNotFound},
		{"PROPFIND", "/d/", []string{"Depth", "1"}, http.StatusMultiStatus},
		{"PROPFIND", "/d/.", []string{"Depth", "0"}, http.StatusMultiStatus},
		{http.MethodGet, "/d/", nil, http.StatusOK},
	} {
		writeFile(t, dir, "f", []byte("hello"))
		os.MkdirAll(filepath.Join(dir, "d"), 0o755)
		var upload io.Reader
		if c.method == http.MethodPut {
			upload = strings.NewReader("bye")
		}
		resp, body := do(t, c.method, base+c.path, upload, c.hdr...)
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d %q, want %d", c.method, c.path, resp.StatusCode, body, c.want)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "hello" {
			t.Errorf("%s %s: the file f is now %q (%v), want it untouched", c.method, c.path, b, err)
		}
		for _, n := range []string{"g", "nx"} {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				t.Errorf("%s %s: made %s", c.method, c.path, n)
				os.RemoveAll(filepath.Join(dir, n))
			}
		}
	}
}
