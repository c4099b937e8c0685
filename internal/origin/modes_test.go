package origin

import (
	"context"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"sitebox/internal/store"
)

// Jobs on the box run as other accounts: whatever mode a client asks
// for and whatever the umask, nothing the origin makes in a pool lets
// "others" in. The owner's and group's bits are the client's.
func TestOriginGivesOthersNothing(t *testing.T) {
	old := syscall.Umask(0o022) // process-wide: no test here runs in parallel
	t.Cleanup(func() { syscall.Umask(old) })
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 2, false) // a rename makes the parent on its file's pool
	create := func(name string, opts store.CreateOptions) {
		t.Helper()
		f, err := o.Create(ctx, name, opts)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	create("/store/default", store.CreateOptions{})                                  // an HTTP PUT, a kXR_open without mode
	create("/store/asked/open/f", store.CreateOptions{Perm: 0o666, MkParents: true}) // kXR_mkpath, rw-rw-rw-
	create("/store/tpc.bin", store.CreateOptions{Perm: 0o755, Exclusive: true})      // a copy keeping its source's mode
	if err := o.Mkdir(ctx, "/store/d/e", 0o777, true); err != nil {                  // xrdfs mkdir -p -m rwxrwxrwx
		t.Fatal(err)
	}
	if err := o.Mkdir(ctx, "/store/plain", 0, false); err != nil { // WebDAV MKCOL
		t.Fatal(err)
	}
	create("/store/moved", store.CreateOptions{})
	if err := o.Rename(ctx, "/store/moved", "/store/d/e/moved"); err != nil {
		t.Fatal(err)
	}
	create("/store/chmod", store.CreateOptions{})
	if err := o.Chmod(ctx, "/store/chmod", 0o644); err != nil { // xrdfs chmod rw-r--r--
		t.Fatal(err)
	}

	// The umask takes the group's write bit, as it would from xrootd's.
	want := map[string]fs.FileMode{
		"default": 0o640, "asked": 0o750, "asked/open": 0o750, "asked/open/f": 0o640,
		"tpc.bin": 0o750, "d": 0o750, "d/e": 0o750, "d/e/moved": 0o640, "plain": 0o750, "chmod": 0o640,
	}
	seen := map[string]bool{}
	for _, pool := range dirs {
		err := filepath.WalkDir(pool, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == pool {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(pool, p)
			seen[rel] = true
			if fi.Mode().Perm()&0o007 != 0 {
				t.Errorf("%s: mode %v gives others access", rel, fi.Mode())
			}
			if w, ok := want[rel]; ok && fi.Mode().Perm() != w {
				t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), w)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for rel := range want {
		if !seen[rel] {
			t.Errorf("%s was not made", rel)
		}
	}
}
