package origin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/store"
)

// TestPoolFollowsRecreatedDirectory: a pool directory deleted and made
// again after start (as fsspec-xrootd's fixture does) is served, and
// written, as it is now.
func TestPoolFollowsRecreatedDirectory(t *testing.T) {
	o, dirs := newTestOrigin(t, 1, false)
	ctx := context.Background()
	os.WriteFile(filepath.Join(dirs[0], "old"), []byte("x"), 0o644)
	if _, err := o.Stat(ctx, "/store/old"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dirs[0], 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dirs[0], "new"), []byte("y"), 0o644)
	if _, err := o.Stat(ctx, "/store/new"); err != nil {
		t.Fatalf("stat of a file in the recreated directory: %v", err)
	}
	if _, err := o.Stat(ctx, "/store/old"); err == nil {
		t.Error("a file of the deleted directory is still served")
	}
	w, err := store.Create(ctx, o, "/store/up", store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteAt([]byte("z"), 0)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dirs[0], "up")); err != nil || string(b) != "z" {
		t.Errorf("upload into the recreated directory: %q %v", b, err)
	}
}
