package webdav

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"sitebox/internal/store"
)

// rawRequest sends the request line as given, so no client library can
// clean or re-escape the path first.
func rawRequest(t *testing.T, addr, method, target string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 400 && strings.Contains(string(body), "/tmp") {
		t.Errorf("error body names a disk path: %s", body)
	}
	return resp.StatusCode
}

func TestBadPaths(t *testing.T) {
	srv, dir := newServer(t, Config{})
	writeFile(t, dir, "f", []byte("x"))
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, target := range []string{
		"/store/../store/f",
		"/store/%2e%2e/%2e%2e/etc/passwd",
		"/store/%2E%2E/f",
		"/store/..%2f..%2fetc",
		"/store/a%00b",
		"/store/a%01b",
		"/store/a%7fb",
		"/store/a%0ab",
		"/store/%zz",
		"store/f",
	} {
		for _, method := range []string{"GET", "PUT", "PROPFIND", "DELETE"} {
			t.Run(method+" "+target, func(t *testing.T) {
				if code := rawRequest(t, addr, method, target); code != 400 {
					t.Fatalf("status %d, want 400", code)
				}
			})
		}
	}
	if code := rawRequest(t, addr, "GET", "/store/./f"); code != 200 {
		t.Fatalf("GET /store/./f: %d, want 200", code)
	}
	if code := rawRequest(t, addr, "OPTIONS", "*"); code != 200 {
		t.Fatalf("OPTIONS *: %d", code)
	}
}

func TestReadOnly(t *testing.T) {
	srv, dir := newServer(t, Config{ReadOnly: true})
	writeFile(t, dir, "f", []byte("x"))
	writeFile(t, dir, "d/g", []byte("y"))
	for _, tc := range []struct {
		method, path string
		hdr          []string
		status       int
	}{
		{"GET", "/store/f", nil, 200},
		{"PROPFIND", "/store/d", []string{"Depth", "1"}, 207},
		{"PUT", "/store/new", nil, 403},
		{"PUT", "/store/f", nil, 403},
		{"DELETE", "/store/f", nil, 403},
		{"MKCOL", "/store/d2", nil, 403},
		{"MOVE", "/store/f", []string{"Destination", "/store/f2"}, 403},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			resp, _ := do(t, tc.method, srv.URL+tc.path, strings.NewReader(""), tc.hdr...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	if b, _ := os.ReadFile(dir + "/f"); string(b) != "x" {
		t.Fatal("read-only handler changed a file")
	}
}

func TestStatusMapping(t *testing.T) {
	pe := func(err error) error { return &store.PathError{Op: "op", Path: "/p", Err: err} }
	for _, tc := range []struct {
		err    error
		status int
	}{
		{pe(store.ErrNotFound), 404},
		{pe(store.ErrPermission), 403},
		{pe(store.ErrReadOnly), 403},
		{pe(store.ErrExist), 412},
		{pe(store.ErrIsDir), 409},
		{pe(store.ErrNotDir), 409},
		{pe(store.ErrNotEmpty), 409},
		{pe(store.ErrInvalid), 400},
		{pe(store.ErrNoSpace), 507},
		{pe(store.ErrUnsupported), 501},
		{pe(store.ErrIO), 500},
		{pe(fmt.Errorf("%w: origin: dial tcp 10.0.0.1:1094: connection refused", store.ErrUnavailable)), 502},
		{pe(fmt.Errorf("%w (%w): origin: %w", store.ErrIO, store.ErrUnavailable, context.DeadlineExceeded)), 504},
		{pe(fmt.Errorf("%w: origin: %w", store.ErrUnavailable, store.ErrNotFound)), 404},
		{&fs.PathError{Op: "open", Path: "/data/pool1/secret", Err: errors.New("boom")}, 500},
		{&httpError{405, "no"}, 405},
		{&clientBodyError{io.ErrUnexpectedEOF}, 400},
		{&http.MaxBytesError{Limit: 1}, 413},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			code := statusOf(tc.err)
			if code != tc.status {
				t.Fatalf("status %d, want %d", code, tc.status)
			}
			if msg := message(tc.err, code); strings.Contains(msg, "/data/pool1") || msg == "" {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

// fakeStore answers every call with err and has no Namespace.
type fakeStore struct{ err error }

func (f fakeStore) Stat(context.Context, string) (store.FileInfo, error) {
	return store.FileInfo{}, f.err
}
func (f fakeStore) Open(context.Context, string) (store.File, error)         { return nil, f.err }
func (f fakeStore) List(context.Context, string) ([]store.FileInfo, error)   { return nil, f.err }
func (f fakeStore) Checksum(context.Context, string, string) (string, error) { return "", f.err }
func (f fakeStore) Locate(context.Context, string) ([]store.Location, error) { return nil, f.err }
func (f fakeStore) Create(context.Context, string, store.CreateOptions) (store.WritableFile, error) {
	return nil, f.err
}

func TestStoreErrorsReachClient(t *testing.T) {
	for _, tc := range []struct {
		err            error
		method         string
		status         int
		bodyHas, never string
	}{
		{&store.PathError{Op: "stat", Path: "/x", Err: store.ErrNoSpace}, "GET", 507, "no space", ""},
		{&store.PathError{Op: "stat", Path: "/x", Err: store.ErrPermission}, "PROPFIND", 403, "permission", ""},
		{&fs.PathError{Op: "stat", Path: "/srv/disk7/x", Err: errors.New("weird")}, "GET", 500, "internal", "/srv/disk7"},
		{nil, "DELETE", 501, "not supported", ""},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(New(Config{}, fakeStore{tc.err}, nil))
			defer srv.Close()
			resp, body := do(t, tc.method, srv.URL+"/x", nil)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.bodyHas) || (tc.never != "" && strings.Contains(body, tc.never)) {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Fatalf("Content-Type %q", ct)
			}
		})
	}
}
