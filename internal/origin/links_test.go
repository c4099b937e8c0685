package origin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"sitebox/internal/store"
)

// linkedOrigin is a pool where the site linked a group's data into a
// user's area (user/frank/glink -> ../../group/data) and a group file
// into it (user/frank/flink -> ../../group/data/f1).
func linkedOrigin(t *testing.T) (*Origin, string) {
	t.Helper()
	o, dirs := newTestOrigin(t, 1, false)
	dir := dirs[0]
	writeFile(t, filepath.Join(dir, "group/data/f1"), "group file")
	writeFile(t, filepath.Join(dir, "group/data/sub/f2"), "group file 2")
	writeFile(t, filepath.Join(dir, "user/frank/own"), "frank's")
	for link, target := range map[string]string{"user/frank/glink": "../../group/data", "user/frank/flink": "../../group/data/f1"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return o, dir
}

// Every change through a link is refused with a LinkError naming the
// link, and what the link leads to is left as it was.
func TestChangesGoThroughNoLink(t *testing.T) {
	ctx := context.Background()
	o, dir := linkedOrigin(t)
	for _, c := range []struct {
		name, link string
		do         func() error
	}{
		{"rm through", "/store/user/frank/glink", func() error { return o.Remove(ctx, "/store/user/frank/glink/f1") }},
		{"rmdir through", "/store/user/frank/glink", func() error { return o.Rmdir(ctx, "/store/user/frank/glink/sub") }},
		{"mkdir through", "/store/user/frank/glink", func() error { return o.Mkdir(ctx, "/store/user/frank/glink/new", 0o755, false) }},
		{"mkdir -p through", "/store/user/frank/glink", func() error { return o.Mkdir(ctx, "/store/user/frank/glink/a/b", 0o755, true) }},
		{"create through", "/store/user/frank/glink", func() error {
			_, err := o.Create(ctx, "/store/user/frank/glink/new", store.CreateOptions{})
			return err
		}},
		{"create with parents through", "/store/user/frank/glink", func() error {
			_, err := o.Create(ctx, "/store/user/frank/glink/x/new", store.CreateOptions{MkParents: true})
			return err
		}},
		{"overwrite through", "/store/user/frank/glink", func() error {
			_, err := o.Create(ctx, "/store/user/frank/glink/f1", store.CreateOptions{Truncate: true})
			return err
		}},
		{"write a link to a file", "/store/user/frank/flink", func() error {
			_, err := o.Create(ctx, "/store/user/frank/flink", store.CreateOptions{Truncate: true})
			return err
		}},
		{"mv from through", "/store/user/frank/glink", func() error { return o.Rename(ctx, "/store/user/frank/glink/f1", "/store/user/frank/x") }},
		{"mv to through", "/store/user/frank/glink", func() error { return o.Rename(ctx, "/store/user/frank/own", "/store/user/frank/glink/f1") }},
		{"mv a link", "/store/user/frank/glink", func() error { return o.Rename(ctx, "/store/user/frank/glink", "/store/user/frank/sub/glink") }},
		{"chmod through", "/store/user/frank/glink", func() error { return o.Chmod(ctx, "/store/user/frank/glink/f1", 0o600) }},
		{"chmod a link", "/store/user/frank/flink", func() error { return o.Chmod(ctx, "/store/user/frank/flink", 0o600) }},
		{"set an attribute through", "/store/user/frank/glink", func() error {
			_, err := o.Attrs(ctx, "/store/user/frank/glink/f1", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "a", Value: []byte("1")}}})
			return err
		}},
		{"set an attribute of a link", "/store/user/frank/flink", func() error {
			_, err := o.Attrs(ctx, "/store/user/frank/flink", store.AttrQuery{Op: store.AttrSet, Attrs: []store.Attr{{Name: "a", Value: []byte("1")}}})
			return err
		}},
		{"precheck through", "/store/user/frank/glink", func() error {
			return o.Precheck(ctx, store.Call{Op: "rm", Path: "/store/user/frank/glink/f1"})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			var le *store.LinkError
			if !errors.As(err, &le) || le.Path != c.link || !errors.Is(err, store.ErrPermission) {
				t.Fatalf("err %v, want a LinkError for %s", err, c.link)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(dir, "group/data/f1")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("group/data/f1: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "group/data/f1")); string(b) != "group file" {
		t.Errorf("group/data/f1 holds %q", b)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "group/data"))
	if len(ents) != 2 {
		t.Errorf("group/data holds %d entries, want f1 and sub", len(ents))
	}
	if _, err := os.Stat(filepath.Join(dir, "user/frank/x")); err == nil {
		t.Error("a move through the link happened")
	}
}

// Removing a link removes the link itself; reads still follow it.
func TestRemoveLinkItself(t *testing.T) {
	ctx := context.Background()
	o, dir := linkedOrigin(t)
	if f, err := o.Open(ctx, "/store/user/frank/glink/f1"); err != nil {
		t.Fatalf("read through the site's link: %v", err)
	} else {
		f.Close()
	}
	if err := o.Rmdir(ctx, "/store/user/frank/glink"); !errors.Is(err, store.ErrNotDir) {
		t.Errorf("rmdir of a link: %v, want not a directory", err)
	}
	for _, l := range []string{"glink", "flink"} {
		if err := o.Remove(ctx, "/store/user/frank/"+l); err != nil {
			t.Fatalf("rm %s: %v", l, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "user/frank", l)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there: %v", l, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "group/data/f1")); string(b) != "group file" {
		t.Errorf("group/data/f1 holds %q", b)
	}
}

// Under store.NoFollow (a tree walk) a link is described as itself,
// listed as one, and neither opened nor gone through.
func TestNoFollowDescribesLinks(t *testing.T) {
	o, _ := linkedOrigin(t)
	ctx := store.NoFollow(context.Background())
	fi, err := o.Stat(ctx, "/store/user/frank/glink")
	if err != nil || !fi.IsLink() || fi.IsDir() {
		t.Errorf("stat of a link: %+v %v, want the link", fi, err)
	}
	if fi, err := o.Stat(context.Background(), "/store/user/frank/glink"); err != nil || !fi.IsDir() {
		t.Errorf("stat following: %+v %v, want the directory it leads to", fi, err)
	}
	list, err := o.List(ctx, "/store/user/frank")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range list {
		kinds[e.Name] = e.IsLink()
	}
	if !kinds["glink"] || !kinds["flink"] || kinds["own"] {
		t.Errorf("listing: %+v", list)
	}
	for _, p := range []string{"/store/user/frank/flink", "/store/user/frank/glink/f1"} {
		if _, err := o.Open(ctx, p); !errors.Is(err, store.ErrLink) {
			t.Errorf("open %s: %v, want a link refused", p, err)
		}
	}
	if _, err := o.List(ctx, "/store/user/frank/glink"); !errors.Is(err, store.ErrLink) || !strings.Contains(err.Error(), "/store/user/frank/glink is a symbolic link") {
		t.Errorf("list through a link: %v", err)
	}
	f, err := o.Open(ctx, "/store/user/frank/own")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A rename decides its refusals before it changes anything: a directory
// on another pool at the destination leaves the source in place and no
// parent made.
func TestRenameRefusesFirst(t *testing.T) {
	ctx := context.Background()
	o, dirs := newTestOrigin(t, 2, false)
	writeFile(t, filepath.Join(dirs[0], "a/d/f"), "x")
	writeFile(t, filepath.Join(dirs[1], "b/d/g"), "y")
	if err := o.Rename(ctx, "/store/a/d", "/store/b/d"); !errors.Is(err, store.ErrExist) {
		t.Fatalf("err %v, want exists", err)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "a/d/f")); err != nil {
		t.Error(err)
	}
	if err := o.Precheck(ctx, store.Call{Op: "mv", Path: "/store/a/d", To: "/store/a/d/e"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("precheck of a move into itself: %v", err)
	}
	if err := o.Precheck(ctx, store.Call{Op: "rm", Path: "/store"}); !errors.Is(err, store.ErrPermission) {
		t.Errorf("precheck of removing an export's top: %v", err)
	}
}

// The errnos a disk answers become sentinels with the origin's own words
// where the sentinel alone would mislead, and the disk path never shows.
func TestClassifyErrno(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		want  error
		msg   string
	}{
		{syscall.ENOENT, store.ErrNotFound, "file does not exist"},
		{syscall.EPERM, store.ErrPermission, "permission denied"},
		{syscall.EDQUOT, store.ErrNoSpace, "no space left on storage"},
		{syscall.ENOTDIR, store.ErrNotDir, "not a directory: a path element is a file"},
		{syscall.ELOOP, store.ErrInvalid, "invalid argument: too many symbolic links"},
		{syscall.EINVAL, store.ErrInvalid, "invalid argument: invalid argument"},
		{syscall.EXDEV, store.ErrUnsupported, "operation not supported: cannot move across storage pools"},
		{syscall.ENAMETOOLONG, store.ErrNameTooLong, "invalid argument: name too long"},
		{syscall.ENOTSUP, store.ErrIO, "i/o error: operation not supported"},
		{syscall.EBUSY, store.ErrIO, "i/o error: device or resource busy"},
	} {
		err := classify(&fs.PathError{Op: "open", Path: "/data/pool1/f", Err: tc.errno})
		if !errors.Is(err, tc.want) || err.Error() != tc.msg {
			t.Errorf("%v: %v, want %v as %q", tc.errno, err, tc.want, tc.msg)
		}
	}
}
