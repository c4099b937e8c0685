package webdav

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// linkedPool lays out a pool where the site linked a group's data into a
// user's area: user/frank/glink -> ../../group/data.
func linkedPool(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, dir, "group/data/f1", []byte("group file 1"))
	writeFile(t, dir, "group/data/sub/f2", []byte("group file 2"))
	writeFile(t, dir, "user/frank/own.txt", []byte("frank's"))
	if err := os.Symlink("../../group/data", filepath.Join(dir, "user/frank/glink")); err != nil {
		t.Fatal(err)
	}
}

// groupIntact fails the test unless the linked group data is untouched.
func groupIntact(t *testing.T, dir string) {
	t.Helper()
	for f, want := range map[string]string{"group/data/f1": "group file 1", "group/data/sub/f2": "group file 2"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want it untouched", f, b, err)
		}
	}
}

func TestDeleteRemovesLinksNotWhatTheyLeadTo(t *testing.T) {
	for _, target := range []string{"/store/user/frank", "/store/user/frank/glink"} {
		t.Run(target, func(t *testing.T) {
			srv, dir := newServer(t, Config{})
			linkedPool(t, dir)
			resp, body := do(t, "DELETE", srv.URL+target, nil)
			if resp.StatusCode != 204 {
				t.Errorf("DELETE %s: %d %s, want 204", target, resp.StatusCode, body)
			}
			groupIntact(t, dir)
			if _, err := os.Lstat(filepath.Join(dir, "user/frank/glink")); !os.IsNotExist(err) {
				t.Errorf("the link itself is still there: %v", err)
			}
		})
	}
}

// A change named through a link inside the pool is refused: the policy
// was asked about the path the client named, which is not where the link
// leads.
func TestChangesThroughALinkRefused(t *testing.T) {
	srv, dir := newServer(t, Config{})
	linkedPool(t, dir)
	for _, c := range []struct {
		method, path string
		body         string
		hdr          []string
	}{
		{"DELETE", "/store/user/frank/glink/f1", "", nil},
		{"DELETE", "/store/user/frank/glink/sub", "", nil},
		{"PUT", "/store/user/frank/glink/f1", "overwritten", nil},
		{"PUT", "/store/user/frank/glink/new", "new", nil},
		{"MKCOL", "/store/user/frank/glink/newdir", "", nil},
		{"MOVE", "/store/user/frank/glink/f1", "", []string{"Destination", "/store/user/frank/moved"}},
		{"MOVE", "/store/user/frank/own.txt", "", []string{"Destination", "/store/user/frank/glink/f1"}},
		{"MOVE", "/store/user/frank/glink", "", []string{"Destination", "/store/user/frank/sub/glink"}},
		{"COPY", "/store/user/frank/own.txt", "", []string{"Destination", "/store/user/frank/glink/f1"}},
		{"COPY", "/store/user/frank/glink", "", []string{"Destination", "/store/user/frank/stolen"}},
		{"COPY", "/store/user/frank/glink/f1", "", []string{"Destination", "/store/user/frank/stolen1"}},
		{"COPY", "/store/user/frank", "", []string{"Destination", "/store/user/frank2"}},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			resp, body := do(t, c.method, srv.URL+c.path, strings.NewReader(c.body), c.hdr...)
			if resp.StatusCode != 403 || !strings.Contains(body, "symbolic link") {
				t.Errorf("%d %q, want 403 naming the symbolic link", resp.StatusCode, body)
			}
			if strings.Contains(body, uploadPrefix) {
				t.Errorf("the refusal names a temporary: %q", body)
			}
		})
	}
	groupIntact(t, dir)
	for _, f := range []string{"group/data/new", "group/data/newdir", "user/frank/moved", "user/frank/stolen",
		"user/frank/stolen1", "user/frank2", "user/frank/sub"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s: %v, want nothing made", f, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user/frank/own.txt")); string(b) != "frank's" {
		t.Errorf("own.txt holds %q", b)
	}
	// Reads follow the site's link, as before.
	if resp, body := do(t, "GET", srv.URL+"/store/user/frank/glink/f1", nil); resp.StatusCode != 200 || body != "group file 1" {
		t.Errorf("GET through the link: %d %q", resp.StatusCode, body)
	}
}

// swapStore swaps a directory of the pool for a symbolic link to the
// group's data right after a tree walk listed it the after-th time:
// whoever can write the pool's directories (a local user) racing a
// DELETE or COPY.
type swapStore struct {
	*origin.Origin
	dir, swap string // pool directory, pool-relative directory to swap
	after     int
	mu        sync.Mutex
	listed    int
}

func (s *swapStore) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	out, err := s.Origin.List(ctx, name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if name == "/store/"+s.swap {
		if s.listed++; s.listed == s.after {
			d := filepath.Join(s.dir, s.swap)
			os.RemoveAll(d)
			os.Symlink(strings.Repeat("../", strings.Count(s.swap, "/"))+"group/data", d)
		}
	}
	return out, err
}

func TestTreeWalkRacingALinkSwap(t *testing.T) {
	for _, c := range []struct {
		method, dest string
		after        int
	}{{"DELETE", "", 1}, {"COPY", "/store/user/copy", 1}, {"COPY", "/store/user/copy", 2}} {
		t.Run(fmt.Sprintf("%s after listing %d", c.method, c.after), func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "group/data/f1", []byte("group file 1"))
			writeFile(t, dir, "group/data/sub/f2", []byte("group file 2"))
			writeFile(t, dir, "user/frank/d/f1", []byte("frank's f1"))
			writeFile(t, dir, "user/frank/d/sub/f2", []byte("frank's f2"))
			o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			srv := httptest.NewServer(New(Config{}, &swapStore{Origin: o, dir: dir, swap: "user/frank/d", after: c.after}, nil))
			defer srv.Close()
			var hdr []string
			if c.dest != "" {
				hdr = []string{"Destination", c.dest}
			}
			resp, body := do(t, c.method, srv.URL+"/store/user/frank", nil, hdr...)
			if resp.StatusCode != 403 || !strings.Contains(body, "/store/user/frank/d is a symbolic link") {
				t.Errorf("%d %q, want 403 naming the link swapped in", resp.StatusCode, body)
			}
			groupIntact(t, dir)
			for _, f := range []string{"user/copy/d/f1", "user/copy/d/sub/f2"} {
				if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.HasPrefix(string(b), "group") {
					t.Errorf("%s holds the group's data %q", f, b)
				}
			}
		})
	}
}
