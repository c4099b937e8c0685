package origin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

// The namespace changes act on the entry a path names, reached through no
// link (nolinks.go): removing a link removes the link, never what it
// leads to, and a path through a link is refused.

var _ store.Prechecker = (*Origin)(nil)

// inParent runs do with the directory holding rel on pool p, opened
// through no link, and rel's last element; a pool without that directory
// is skipped (found false).
func inParent(p *pool, rel string, do func(dir int, base string) error) (found bool, err error) {
	dir, base, err := openParentNoLinks(p.dirRoot(), rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return true, do(int(dir.Fd()), base)
}

// Remove deletes a file, or a link (itself), from every pool holding it.
func (o *Origin) Remove(ctx context.Context, name string) error {
	name, ex, rel, err := o.writable("rm", name)
	if err != nil {
		return err
	}
	if rel == "." {
		return wrap("rm", name, store.ErrIsDir)
	}
	removed := false
	for _, p := range ex.pools {
		found, err := inParent(p, rel, func(dir int, base string) error {
			var st unix.Stat_t
			if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				return store.ErrIsDir
			}
			return unix.Unlinkat(dir, base, 0)
		})
		if err != nil {
			return wrap("rm", name, err)
		}
		removed = removed || found
	}
	if !removed {
		return wrap("rm", name, fs.ErrNotExist)
	}
	return nil
}

// Rmdir removes an empty directory, which must be empty in the merged
// view. A link is no directory, whatever it leads to.
func (o *Origin) Rmdir(ctx context.Context, name string) error {
	name, ex, rel, err := o.writable("rmdir", name)
	if err != nil {
		return err
	}
	if rel == "." {
		return wrap("rmdir", name, fmt.Errorf("%w: cannot remove an export's top directory", store.ErrPermission))
	}
	_, fi, err := ex.findNoLinks(rel)
	if err != nil {
		return wrap("rmdir", name, err)
	}
	if !fi.IsDir() {
		return wrap("rmdir", name, store.ErrNotDir)
	}
	entries, err := o.List(store.NoFollow(ctx), name)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return wrap("rmdir", name, store.ErrNotEmpty)
	}
	removed := false
	for _, p := range ex.pools {
		found, err := inParent(p, rel, func(dir int, base string) error {
			return unix.Unlinkat(dir, base, unix.AT_REMOVEDIR)
		})
		if err != nil {
			return wrap("rmdir", name, err)
		}
		removed = removed || found
	}
	if !removed {
		return wrap("rmdir", name, fs.ErrNotExist)
	}
	return nil
}

// Chmod changes permissions on every pool holding name; a link has none
// of its own, and what it leads to is not changed through it. Like every
// mode the origin sets, it gives others nothing (see withoutOthers).
func (o *Origin) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	name, ex, rel, err := o.writable("chmod", name)
	if err != nil {
		return err
	}
	perm = withoutOthers(perm)
	changed := false
	for _, p := range ex.pools {
		var found bool
		if rel == "." {
			found, err = true, chmodTop(p, perm)
		} else {
			found, err = inParent(p, rel, func(dir int, base string) error { return chmodAt(dir, base, perm) })
		}
		if err != nil {
			return wrap("chmod", name, err)
		}
		changed = changed || found
	}
	if !changed {
		return wrap("chmod", name, fs.ErrNotExist)
	}
	return nil
}

func chmodTop(p *pool, perm fs.FileMode) error {
	d, err := openDirNoLinks(p.dirRoot(), ".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Chmod(perm.Perm())
}

// chmodAt changes base in dir without following it. Kernels before 6.6
// lack fchmodat2 (EOPNOTSUPP for every entry): there the entry, unless a
// link, is opened without following and changed by descriptor.
func chmodAt(dir int, base string, perm fs.FileMode) error {
	err := unix.Fchmodat(dir, base, uint32(perm.Perm()), unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &linkAt{why: whyThrough}
	}
	fd, err := unix.Openat(dir, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, uint32(perm.Perm()))
}

// Precheck refuses, changing nothing, what the change c would be refused
// here now (see store.Prechecker): a read-only export, a path outside
// every export or through a link, an export's top, and for a move all
// that Rename decides before it changes anything.
func (o *Origin) Precheck(ctx context.Context, c store.Call) error {
	if c.Op == "mv" {
		_, err := o.planRename(c.Path, c.To)
		return err
	}
	name, ex, rel, err := o.writable(c.Op, c.Path)
	if err != nil {
		return err
	}
	if rel == "." && (c.Op == "rm" || c.Op == "rmdir") {
		return wrap(c.Op, name, fmt.Errorf("%w: cannot remove an export's top directory", store.ErrPermission))
	}
	if _, _, err := ex.findNoLinks(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrap(c.Op, name, err)
	}
	return nil
}

// renamePlan is a rename decided, nothing changed yet.
type renamePlan struct {
	ex         *export
	src        *pool // the pool holding the source
	srcDir     bool
	from, to   string
	rel, rel2  string
	parentRel2 string
}

// Rename moves a file or directory within its pool. Both names must be in
// the same export; a destination file on another pool is removed so the
// merged namespace never shows two versions. A link is not moved: what a
// relative link leads to would change with its place.
func (o *Origin) Rename(ctx context.Context, from, to string) error {
	mv, err := o.planRename(from, to)
	if err != nil {
		return err
	}
	if mv.from == mv.to {
		return nil // rename(2) onto itself changes nothing, and succeeds
	}
	return mv.do()
}

// planRename decides all a rename may refuse about its source and the
// destination's place, changing nothing (Precheck asks it too). What is
// at the destination now is left to do: a caller replacing it deletes it
// first.
func (o *Origin) planRename(from, to string) (*renamePlan, error) {
	from, ex, rel, err := o.writable("mv", from)
	if err != nil {
		return nil, err
	}
	to, ex2, rel2, err := o.writable("mv", to)
	if err != nil {
		return nil, err
	}
	if ex != ex2 {
		return nil, wrap("mv", from, fmt.Errorf("%w: source and destination are in different exports", store.ErrUnsupported))
	}
	if rel == "." || rel2 == "." {
		return nil, wrap("mv", from, fmt.Errorf("%w: cannot move an export's top directory", store.ErrPermission))
	}
	if store.HasPrefix(to, from) && to != from {
		return nil, wrap("mv", from, fmt.Errorf("%w: cannot move a directory into itself", store.ErrInvalid))
	}
	src, sfi, err := ex.findNoLinks(rel)
	if err != nil {
		return nil, wrap("mv", from, err)
	}
	if sfi.Mode()&fs.ModeSymlink != 0 {
		return nil, wrap("mv", from, &linkAt{why: whyMove})
	}
	mv := &renamePlan{ex: ex, src: src, srcDir: sfi.IsDir(), from: from, to: to, rel: rel, rel2: rel2, parentRel2: path.Dir(rel2)}
	if mv.parentRel2 != "." {
		if err := ex.dirNoLinks(mv.parentRel2); err != nil {
			return nil, wrap("mv", to, childOf(err))
		}
	}
	return mv, nil
}

// do makes the planned rename: the destination's conflicts on other
// pools are checked first, its stale copies there removed only after
// the rename succeeded.
func (mv *renamePlan) do() error {
	var stale []*pool
	for _, p := range mv.ex.pools {
		if p == mv.src {
			continue
		}
		fi, err := lstatNoLinks(p.dirRoot(), mv.rel2)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return wrap("mv", mv.to, err)
		}
		if fi.IsDir() || mv.srcDir {
			return wrap("mv", mv.to, store.ErrExist)
		}
		stale = append(stale, p)
	}
	root := mv.src.dirRoot()
	if mv.parentRel2 != "." {
		// The parent exists in the merged namespace, perhaps not here.
		if err := mkdirAllNoLinks(root, mv.parentRel2, newDirMode(0o755)); err != nil {
			return wrap("mv", mv.to, childOf(err))
		}
	}
	if err := mv.rename(root); err != nil {
		return err
	}
	for _, p := range stale {
		if _, err := inParent(p, mv.rel2, func(dir int, base string) error { return unix.Unlinkat(dir, base, 0) }); err != nil {
			return wrap("mv", mv.to, err)
		}
	}
	return nil
}

// rename renames rel to rel2 in root, both reached through no link.
func (mv *renamePlan) rename(root *os.Root) error {
	from, base, err := openParentNoLinks(root, mv.rel)
	if err != nil {
		return wrap("mv", mv.from, err)
	}
	defer from.Close()
	to, base2, err := openParentNoLinks(root, mv.rel2)
	if err != nil {
		return wrap("mv", mv.to, err)
	}
	defer to.Close()
	return wrap("mv", mv.from, unix.Renameat(int(from.Fd()), base, int(to.Fd()), base2))
}
