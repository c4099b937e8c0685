package webdav

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sitebox/internal/origin"
	"sitebox/internal/store"
)

// A file another client is writing (here: a root:// session holding the
// origin's writer lock) is refused to PUT and to a COPY onto it with 423
// Locked, as XrdHttp answers, and is left alone.
func TestWriterLockShared(t *testing.T) {
	dir := t.TempDir()
	o, err := origin.New(origin.Config{Exports: []origin.Export{{Prefix: "/store", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{}, o, nil))
	t.Cleanup(func() { srv.Close(); o.Close() })
	writeFile(t, dir, "f", []byte("being written"))
	writeFile(t, dir, "src", []byte("copy source"))
	unlock, err := store.LockWriter(o, "/store/f", "a root:// session")
	if err != nil {
		t.Fatal(err)
	}
	resp, body := do(t, "PUT", srv.URL+"/store/f", strings.NewReader("second writer"))
	if resp.StatusCode != 423 {
		t.Fatalf("PUT of a locked file: %d %s, want 423", resp.StatusCode, body)
	}
	resp, body = do(t, "COPY", srv.URL+"/store/src", nil, "Destination", srv.URL+"/store/f")
	if resp.StatusCode != 423 {
		t.Fatalf("COPY onto a locked file: %d %s, want 423", resp.StatusCode, body)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "being written" {
		t.Fatalf("locked file changed: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("refused writers left %d entries, want 2", len(ents))
	}
	unlock()
	if resp, body := do(t, "PUT", srv.URL+"/store/f", strings.NewReader("second writer")); resp.StatusCode != 204 {
		t.Fatalf("PUT after the writer let go: %d %s", resp.StatusCode, body)
	}
	// The PUT gave its lock back.
	if _, err := store.LockWriter(o, "/store/f", "another"); err != nil {
		t.Fatalf("lock after the PUT: %v", err)
	}
}
