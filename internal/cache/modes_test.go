package cache

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// withUmask runs the rest of the test under umask mask (process-wide: no
// test of the package runs in parallel with another).
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// The cache's files are the box's alone whatever the umask: a job on the
// box, running as another account, reads none of them, not even the
// directory names (which are the cached paths).
func TestCacheFilesAreOwnerOnly(t *testing.T) {
	withUmask(t, 0o022)
	var dir string
	e := newEnv(t, func(c *Config) {
		dir = filepath.Join(t.TempDir(), "new", "cache") // made by the cache
		c.Dir = dir
	})
	want := e.file("vo/protected/f.bin", 300<<10)
	e.read("/store/vo/protected/f.bin", 64<<10)
	e.settle()
	e.restart() // the block maps are on disk
	e.readCached("/store/vo/protected/f.bin", want)

	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Dir(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		seen[rel] = true
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %v, want the owner's alone", rel, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".", "tmp", "data/store/vo/protected/f.bin", "meta/store/vo/protected/f.bin"} {
		if !seen[p] {
			t.Errorf("%s was not made in the cache dir", p)
		}
	}
}

// A cache directory an earlier version made open to everyone is closed
// when the cache opens it.
func TestCacheClosesAnOpenTree(t *testing.T) {
	withUmask(t, 0o022)
	dir := t.TempDir()
	for _, sub := range []string{"data", "meta", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	newEnv(t, func(c *Config) { c.Dir = dir })
	for _, sub := range []string{"data", "meta", "tmp"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want %v", sub, fi.Mode(), err, fs.FileMode(0o700))
		}
	}
}
