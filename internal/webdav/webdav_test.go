package webdav

import (
	"fmt"
	"hash/adler32"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sitebox/internal/origin"
)

func newServer(t *testing.T, readOnly bool) (*httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{ReadOnly: readOnly}, o, nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	return srv, dir
}

func do(t *testing.T, method, url string, body io.Reader, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, body)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func TestGetRangesAndDigest(t *testing.T) {
	srv, dir := newServer(t, false)
	data := []byte(strings.Repeat("0123456789", 100))
	os.WriteFile(filepath.Join(dir, "f"), data, 0o644)
	u := srv.URL + "/store/f"
	for _, tc := range []struct {
		name, rng string
		status    int
		want      string
	}{
		{"whole", "", 200, string(data)},
		{"single", "bytes=10-19", 206, string(data[10:20])},
		{"suffix", "bytes=-5", 206, string(data[995:])},
		{"open", "bytes=998-", 206, string(data[998:])},
		{"unsatisfiable", "bytes=2000-3000", 416, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, "GET", u, nil, "Range", tc.rng)
			if resp.StatusCode != tc.status || (tc.want != "" && body != tc.want) {
				t.Fatalf("status %d body %q; want %d %q", resp.StatusCode, body, tc.status, tc.want)
			}
		})
	}
	resp, body := do(t, "GET", u, nil, "Range", "bytes=0-1,10-11")
	if resp.StatusCode != 206 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/byteranges") || !strings.Contains(body, "Content-Range: bytes 10-11/1000") {
		t.Fatalf("multi-range: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := fmt.Sprintf("adler32=%08x", adler32.Checksum(data))
	resp, _ = do(t, "HEAD", u, nil, "Want-Digest", "md5;q=1, crc32c;q=0.3, adler32;q=0.9")
	if got := resp.Header.Get("Digest"); got != want {
		t.Fatalf("Digest = %q, want %q", got, want)
	}
	if resp.Header.Get("ETag") == "" || resp.Header.Get("Last-Modified") == "" {
		t.Fatal("missing ETag or Last-Modified")
	}
	resp, _ = do(t, "GET", u, nil, "If-None-Match", resp.Header.Get("ETag"))
	if resp.StatusCode != 304 {
		t.Fatalf("conditional GET: %d, want 304", resp.StatusCode)
	}
}

func TestWriteMethods(t *testing.T) {
	srv, dir := newServer(t, false)
	resp, _ := do(t, "PUT", srv.URL+"/store/a/b/c.txt", strings.NewReader("hello"))
	if resp.StatusCode != 201 {
		t.Fatalf("PUT new: %d", resp.StatusCode)
	}
	resp, _ = do(t, "PUT", srv.URL+"/store/a/b/c.txt", strings.NewReader("hello again"))
	if resp.StatusCode != 204 {
		t.Fatalf("PUT overwrite: %d", resp.StatusCode)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/b/c.txt")); string(b) != "hello again" {
		t.Fatalf("content %q", b)
	}
	resp, _ = do(t, "MKCOL", srv.URL+"/store/a/new", nil)
	if resp.StatusCode != 201 {
		t.Fatalf("MKCOL: %d", resp.StatusCode)
	}
	if resp, _ = do(t, "MKCOL", srv.URL+"/store/a/new", nil); resp.StatusCode != 405 {
		t.Fatalf("MKCOL existing: %d", resp.StatusCode)
	}
	if resp, _ = do(t, "MKCOL", srv.URL+"/store/x/y", nil); resp.StatusCode != 409 {
		t.Fatalf("MKCOL without parent: %d", resp.StatusCode)
	}
	resp, _ = do(t, "MOVE", srv.URL+"/store/a/b/c.txt", nil, "Destination", srv.URL+"/store/a/new/d.txt")
	if resp.StatusCode != 201 {
		t.Fatalf("MOVE: %d", resp.StatusCode)
	}
	_, body := do(t, "PROPFIND", srv.URL+"/store/a/new", nil, "Depth", "1")
	if !strings.Contains(body, "<D:href>/store/a/new/d.txt</D:href>") || !strings.Contains(body, "<D:getcontentlength>11</D:getcontentlength>") {
		t.Fatalf("PROPFIND: %s", body)
	}
	if resp, _ = do(t, "PROPFIND", srv.URL+"/store", nil, "Depth", "infinity"); resp.StatusCode != 403 {
		t.Fatalf("PROPFIND infinity: %d", resp.StatusCode)
	}
	if resp, _ = do(t, "DELETE", srv.URL+"/store/a/new", nil); resp.StatusCode != 409 {
		t.Fatalf("DELETE non-empty dir: %d", resp.StatusCode)
	}
	if resp, _ = do(t, "DELETE", srv.URL+"/store/a/new/d.txt", nil); resp.StatusCode != 204 {
		t.Fatalf("DELETE file: %d", resp.StatusCode)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "a/b"))
	if len(entries) != 0 {
		t.Fatalf("temporary upload files left behind: %v", entries)
	}
}

// A PUT whose body ends early must not replace or create the file.
func TestShortPutLeavesNothing(t *testing.T) {
	srv, dir := newServer(t, false)
	os.WriteFile(filepath.Join(dir, "keep"), []byte("original"), 0o644)
	req, _ := http.NewRequest("PUT", srv.URL+"/store/keep", io.LimitReader(strings.NewReader("partial body"), 7))
	req.ContentLength = 100
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "keep")); string(b) != "original" {
		t.Fatalf("short PUT replaced the file: %q", b)
	}
	// The handler notices the broken body after the client gave up: wait.
	var entries []os.DirEntry
	for range 100 {
		if entries, _ = os.ReadDir(dir); len(entries) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(entries) != 1 {
		t.Fatalf("short PUT left files: %v", entries)
	}
}

func TestRefusals(t *testing.T) {
	srv, dir := newServer(t, true)
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/store/%2e%2e/%2e%2e/etc/passwd", 400},
		{"GET", "/store/a%00b", 400},
		{"GET", "/store/missing", 404},
		{"PUT", "/store/new", 403},
		{"DELETE", "/store/f", 403},
		{"MKCOL", "/store/d", 403},
		{"PATCH", "/store/f", 405},
	} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(""))
		req.URL.RawPath = tc.path
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
}
