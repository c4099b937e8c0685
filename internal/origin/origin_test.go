package origin

import (
	"context"
	"errors"
	"hash/adler32"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

func newTestOrigin(t *testing.T, pools int, readOnly bool) (*Origin, []string) {
	t.Helper()
	var dirs []string
	for range pools {
		dirs = append(dirs, t.TempDir())
	}
	o, err := New(Config{Exports: []Export{{Prefix: "/store", Pools: dirs, ReadOnly: readOnly}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o, dirs
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMergedPools(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 2, false)
	writeFile(t, filepath.Join(dirs[0], "d/a"), "aaa")
	writeFile(t, filepath.Join(dirs[1], "d/b"), "bbbb")
	writeFile(t, filepath.Join(dirs[1], "d/a"), "shadowed")

	list, err := o.List(ctx, "/store/d")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "a" || list[0].Size != 3 || list[1].Name != "b" || list[1].Size != 4 {
		t.Fatalf("merged listing = %+v, want a(3) and b(4)", list)
	}
	f, err := o.Open(ctx, "/store/d/b")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	n, err := f.ReadAt(buf, 0)
	if n != 4 || !errors.Is(err, io.EOF) || string(buf[:n]) != "bbbb" {
		t.Fatalf("ReadAt = %d %v %q", n, err, buf[:n])
	}
	f.Close()

	// A new file lands on one pool; its parent directory is created there
	// even if the parent so far existed only on the other pool.
	w, err := o.Create(ctx, "/store/d/new", store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("xyz"), 0); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fi, err := o.Stat(ctx, "/store/d/new")
	if err != nil || fi.Size != 3 {
		t.Fatalf("stat new = %+v, %v", fi, err)
	}
	if _, err := o.Create(ctx, "/store/d/new", store.CreateOptions{Exclusive: true}); !errors.Is(err, store.ErrExist) {
		t.Fatalf("exclusive create of existing file: %v, want ErrExist", err)
	}
	if _, err := o.Create(ctx, "/store/missing/x", store.CreateOptions{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("create without parent: %v, want ErrNotFound", err)
	}
	if _, err := o.Create(ctx, "/store/deep/er/x", store.CreateOptions{MkParents: true}); err != nil {
		t.Fatalf("create with MkParents: %v", err)
	}

	if err := o.Remove(ctx, "/store/d/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Stat(ctx, "/store/d/a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("removed file from both pools, stat: %v", err)
	}
}

func TestVirtualParents(t *testing.T) {
	dir := t.TempDir()
	o, err := New(Config{Exports: []Export{{Prefix: "/store/user", Pools: []string{dir}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, p := range []string{"/", "/store"} {
		fi, err := o.Stat(context.Background(), p)
		if err != nil || !fi.IsDir() {
			t.Errorf("stat %s = %+v, %v; want a directory", p, fi, err)
		}
	}
	list, err := o.List(context.Background(), "/store")
	if err != nil || len(list) != 1 || list[0].Name != "user" {
		t.Fatalf("list /store = %+v, %v", list, err)
	}
	if _, err := o.Create(context.Background(), "/store/x", store.CreateOptions{}); !errors.Is(err, store.ErrPermission) {
		t.Fatalf("create outside exports: %v", err)
	}
}

func TestNoEscape(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 1, false)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret"), "secret")
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dirs[0], "abs"))
	os.Symlink("../"+filepath.Base(outside)+"/secret", filepath.Join(dirs[0], "rel"))
	writeFile(t, filepath.Join(dirs[0], "ok"), "ok")
	os.Symlink("ok", filepath.Join(dirs[0], "inside"))

	for _, p := range []string{"/store/abs", "/store/rel", "/store/../etc/passwd", "/store/a\x00b"} {
		if f, err := o.Open(ctx, p); err == nil {
			f.Close()
			t.Errorf("open %q succeeded; want refusal", p)
		}
		if _, err := o.Create(ctx, p, store.CreateOptions{Truncate: true}); err == nil {
			t.Errorf("create %q succeeded; want refusal", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret" {
		t.Fatalf("file outside the export was changed: %q", b)
	}
	if _, err := o.Open(ctx, "/store/inside"); err != nil {
		t.Fatalf("relative symlink inside the pool: %v", err)
	}
}

func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 1, true)
	writeFile(t, filepath.Join(dirs[0], "f"), "data")
	checks := map[string]error{}
	_, checks["create"] = o.Create(ctx, "/store/g", store.CreateOptions{})
	checks["mkdir"] = o.Mkdir(ctx, "/store/d", 0, false)
	checks["rm"] = o.Remove(ctx, "/store/f")
	checks["mv"] = o.Rename(ctx, "/store/f", "/store/h")
	checks["chmod"] = o.Chmod(ctx, "/store/f", 0o600)
	for op, err := range checks {
		if !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("%s on read-only export: %v, want ErrReadOnly", op, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dirs[0], "f")); string(b) != "data" {
		t.Fatal("read-only file changed")
	}
}

func TestChecksumKeptAndInvalidated(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 1, false)
	p := filepath.Join(dirs[0], "f")
	writeFile(t, p, "hello world")
	got, err := o.Checksum(ctx, "/store/f", "adler32")
	if want := cksum.Format(adler32.Checksum([]byte("hello world"))); err != nil || got != want {
		t.Fatalf("adler32 = %q, %v; want %q", got, err, want)
	}
	if c, err := o.Checksum(ctx, "/store/f", "crc32c"); err != nil || c != cksum.Format(cksum.CRC32COf([]byte("hello world"))) {
		t.Fatalf("crc32c = %q, %v", c, err)
	}
	// Change the file: the kept value must not be served.
	time.Sleep(10 * time.Millisecond)
	writeFile(t, p, "hello there")
	got, _ = o.Checksum(ctx, "/store/f", "adler32")
	if want := cksum.Format(adler32.Checksum([]byte("hello there"))); got != want {
		t.Fatalf("after change adler32 = %q, want %q", got, want)
	}
	if _, err := o.Checksum(ctx, "/store/f", "md5x"); !errors.Is(err, store.ErrUnsupported) {
		t.Fatalf("unknown algorithm: %v", err)
	}
}

func TestRenameAndRmdir(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 2, false)
	writeFile(t, filepath.Join(dirs[0], "a/f"), "1")
	writeFile(t, filepath.Join(dirs[1], "b/f"), "old")
	if err := o.Rename(ctx, "/store/a/f", "/store/b/f"); err != nil {
		t.Fatal(err)
	}
	f, err := o.Open(ctx, "/store/b/f")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	n, _ := f.ReadAt(buf, 0)
	f.Close()
	if string(buf[:n]) != "1" {
		t.Fatalf("after mv over a file on another pool, read %q", buf[:n])
	}
	if err := o.Rmdir(ctx, "/store/b"); !errors.Is(err, store.ErrNotEmpty) {
		t.Fatalf("rmdir non-empty: %v", err)
	}
	if err := o.Rmdir(ctx, "/store/a"); err != nil {
		t.Fatalf("rmdir empty: %v", err)
	}
	if err := o.Mkdir(ctx, "/store/x/y/z", 0, true); err != nil {
		t.Fatal(err)
	}
	if err := o.Mkdir(ctx, "/store/q/r", 0, false); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("mkdir without -p: %v", err)
	}
}
