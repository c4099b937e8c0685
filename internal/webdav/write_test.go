package webdav

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPutGet(t *testing.T) {
	srv, dir := newServer(t, Config{})
	big := strings.Repeat("abcdefghij", 300_000) // > putBuffer: several writes
	for _, tc := range []struct {
		name, path, body string
		hdr              []string
		status           int
	}{
		{"new with parents", "/store/a/b/c.txt", "hello", nil, 201},
		{"overwrite", "/store/a/b/c.txt", "hello again", nil, 204},
		{"big", "/store/big", big, nil, 201},
		{"empty", "/store/empty", "", nil, 201},
		{"if-none-match exists", "/store/a/b/c.txt", "no", []string{"If-None-Match", "*"}, 412},
		{"if-none-match new", "/store/inm", "yes", []string{"If-None-Match", "*"}, 201},
		{"if-match stale", "/store/a/b/c.txt", "no", []string{"If-Match", `"old"`}, 412},
		{"if-match new file", "/store/im", "no", []string{"If-Match", "*"}, 412},
		{"onto directory", "/store/a", "x", nil, 409},
		{"under a file", "/store/a/b/c.txt/x", "x", nil, 409},
		{"partial put", "/store/a/b/c.txt", "x", []string{"Content-Range", "bytes 0-0/10"}, 400},
		{"outside exports", "/elsewhere/x", "x", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, "PUT", srv.URL+tc.path, strings.NewReader(tc.body), tc.hdr...)
			if tc.status == 0 {
				if resp.StatusCode < 400 {
					t.Fatalf("status %d, want an error", resp.StatusCode)
				}
				return
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
		})
	}
	for p, want := range map[string]string{"/store/a/b/c.txt": "hello again", "/store/big": big, "/store/empty": "", "/store/inm": "yes"} {
		if resp, body := do(t, "GET", srv.URL+p, nil); resp.StatusCode != 200 || body != want {
			t.Errorf("GET %s: %d, %d bytes, want %d", p, resp.StatusCode, len(body), len(want))
		}
	}
	head, _ := do(t, "HEAD", srv.URL+"/store/inm", nil)
	if resp, _ := do(t, "PUT", srv.URL+"/store/inm", strings.NewReader("v2"), "If-Match", head.Header.Get("ETag")); resp.StatusCode != 204 {
		t.Fatalf("PUT with a matching If-Match: %d", resp.StatusCode)
	}
	// A chunked body (no Content-Length) works too.
	resp, _ := do(t, "PUT", srv.URL+"/store/chunked", io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")))
	if b, _ := os.ReadFile(filepath.Join(dir, "chunked")); resp.StatusCode != 201 || string(b) != "abcd" {
		t.Fatalf("chunked PUT: %d %q", resp.StatusCode, b)
	}
	assertNoUploads(t, dir)
}

func assertNoUploads(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), uploadPrefix) {
			t.Errorf("temporary upload left behind: %s", p)
		}
		return nil
	})
}

// A PUT whose body ends early must neither create nor damage the file.
func TestShortPutLeavesNothing(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "keep", []byte("original"))
	for _, name := range []string{"keep", "new"} {
		req, _ := http.NewRequest("PUT", srv.URL+"/store/"+name, io.LimitReader(strings.NewReader("partial body"), 7))
		req.ContentLength = 100
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "keep")); string(b) != "original" {
		t.Fatalf("short PUT replaced the file: %q", b)
	}
	// The handler notices the broken body after the client gave up: wait.
	var entries []os.DirEntry
	for range 200 {
		if entries, _ = os.ReadDir(dir); len(entries) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(entries) != 1 {
		t.Fatalf("short PUT left files: %v", entries)
	}
}

func TestNamespaceMethods(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "a/f", []byte("data"))
	writeFile(t, dir, "a/g", []byte("other"))
	writeFile(t, dir, "full/x", nil)
	writeFile(t, dir, "tree/sub/y", nil)
	writeFile(t, dir, "tree/z", nil)
	writeFile(t, dir, "coll/c", nil)
	writeFile(t, dir, "over/o", nil)
	host := srv.URL
	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"mkcol", "MKCOL", "/store/new", nil, 201},
		{"mkcol exists", "MKCOL", "/store/new", nil, 405},
		{"mkcol file exists", "MKCOL", "/store/a/f", nil, 405},
		{"mkcol no parent", "MKCOL", "/store/x/y", nil, 409},
		{"move to path", "MOVE", "/store/a/f", []string{"Destination", "/store/new/f"}, 201},
		{"move url", "MOVE", "/store/new/f", []string{"Destination", host + "/store/new/f2"}, 201},
		{"move overwrite F", "MOVE", "/store/new/f2", []string{"Destination", host + "/store/a/g", "Overwrite", "F"}, 412},
		{"move overwrite T", "MOVE", "/store/new/f2", []string{"Destination", host + "/store/a/g", "Overwrite", "T"}, 204},
		{"move missing", "MOVE", "/store/new/f2", []string{"Destination", "/store/z"}, 404},
		{"move no parent", "MOVE", "/store/a/g", []string{"Destination", "/store/q/r/s"}, 409},
		{"move to self", "MOVE", "/store/a/g", []string{"Destination", "/store/a/g"}, 403},
		{"move other host", "MOVE", "/store/a/g", []string{"Destination", "http://elsewhere.example/store/g"}, 502},
		{"move dotdot", "MOVE", "/store/a/g", []string{"Destination", "/store/%2e%2e/g"}, 400},
		{"move no destination", "MOVE", "/store/a/g", nil, 400},
		{"move bad overwrite", "MOVE", "/store/a/g", []string{"Destination", "/store/h", "Overwrite", "maybe"}, 400},
		{"move onto collection, overwrite F", "MOVE", "/store/coll", []string{"Destination", "/store/over", "Overwrite", "F"}, 412},
		{"move onto collection, overwrite T", "MOVE", "/store/coll", []string{"Destination", "/store/over"}, 204},
		{"delete depth 0", "DELETE", "/store/tree", []string{"Depth", "0"}, 400},
		{"delete non-empty dir", "DELETE", "/store/tree", nil, 204},
		{"delete non-empty dir gone", "DELETE", "/store/tree", nil, 404},
		{"delete file", "DELETE", "/store/full/x", nil, 204},
		{"delete empty dir", "DELETE", "/store/full", nil, 204},
		{"delete missing", "DELETE", "/store/full", nil, 404},
		{"delete root", "DELETE", "/", nil, 403},
		{"unknown method", "PATCH", "/store/a/g", nil, 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(t, tc.method, srv.URL+tc.path, nil, tc.hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.path, resp.StatusCode, tc.status, body)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "over/c")); err != nil {
		t.Errorf("MOVE onto a collection: the moved member is missing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "over/o")); err == nil {
		t.Error("MOVE onto a collection kept the replaced collection's member")
	}
	if _, err := os.Stat(filepath.Join(dir, "tree")); err == nil {
		t.Error("recursive DELETE left the directory")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a/g")); string(b) != "data" {
		t.Fatalf("after moves a/g = %q, want the moved data", b)
	}
	resp, _ := do(t, "OPTIONS", srv.URL+"/store", nil)
	if resp.StatusCode != 200 || resp.Header.Get("DAV") != "1" || !strings.Contains(resp.Header.Get("Allow"), "PROPFIND") {
		t.Fatalf("OPTIONS: %d %v", resp.StatusCode, resp.Header)
	}
}
