package origin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

// A pool may hold symbolic links the site placed (a group's data linked
// into a user's area). Reads follow them inside the pool (os.Root keeps
// them there). Changes, and the reads of a tree walk (store.NoFollow),
// never do: they resolve a path one element at a time, each opened
// relative to the directory before it with O_NOFOLLOW, and then act on
// the last element itself in the directory so opened. A link anywhere
// on the way, placed there or swapped in for a directory while a walk
// runs, is refused, never followed; so what a change touches is what
// the namespace path names, the path the policy was asked about.

// linkAt is the refusal of a link found up elements above the path a
// call named (0: the entry itself); wrap turns it into a
// *store.LinkError naming the link's namespace path.
type linkAt struct {
	up  int
	why string
}

func (e *linkAt) Error() string { return "symbolic link: " + e.why }

// Reasons a link is refused, for the client.
const (
	whyThrough = "changes and tree walks never go through a link"
	whyMove    = "a link is not moved (what it leads to would change with its place); delete it instead"
	whyWrite   = "writes never go through a link"
	whyTree    = "tree walks and copies take no links; a link can only be deleted"
)

// linkError names the link of e in name's terms.
func linkError(name string, e *linkAt) error {
	p := name
	for range e.up {
		p = path.Dir(p)
	}
	return &store.LinkError{Path: p, Why: e.why}
}

// elements splits a pool-relative path into its elements ("." has none).
func elements(rel string) ([]string, error) {
	if rel == "." {
		return nil, nil
	}
	elems := strings.Split(rel, "/")
	for _, e := range elems {
		if e == "" || e == "." || e == ".." {
			return nil, fmt.Errorf("%w: %q is not a clean relative path", store.ErrInvalid, rel)
		}
	}
	return elems, nil
}

// openDirNoLinks opens the directory rel of root ("." for the pool's
// top) without following a link on the way or at rel itself.
func openDirNoLinks(root *os.Root, rel string) (*os.File, error) {
	elems, err := elements(rel)
	if err != nil {
		return nil, err
	}
	top, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	fd, err := unix.FcntlInt(top.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	top.Close()
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	for i, e := range elems {
		next, err := unix.Openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = whyNotDir(fd, e, len(elems)-1-i, err)
			unix.Close(fd)
			return nil, err
		}
		unix.Close(fd)
		fd = next
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// whyNotDir explains a failed open of the directory e in dir: a link
// (up elements above the path asked for), or err as it is.
func whyNotDir(dir int, e string, up int, err error) error {
	if !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dir, e, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return &linkAt{up: up, why: whyThrough}
	}
	return err
}

// openParentNoLinks opens the directory holding rel, as openDirNoLinks,
// and returns it with rel's last element. The pool's top has no parent.
func openParentNoLinks(root *os.Root, rel string) (*os.File, string, error) {
	if rel == "." {
		return nil, "", fmt.Errorf("%w: an export's top directory", store.ErrInvalid)
	}
	dir, err := openDirNoLinks(root, path.Dir(rel))
	var la *linkAt
	if errors.As(err, &la) {
		la.up++ // counted from the parent; the call named rel
	}
	return dir, path.Base(rel), err
}

// lstatAt describes the entry base of dir itself, a link as a link.
func lstatAt(dir *os.File, base string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: base, Err: err}
	}
	return &lstatInfo{name: base, st: st}, nil
}

// lstatNoLinks describes rel in root without following any link.
func lstatNoLinks(root *os.Root, rel string) (fs.FileInfo, error) {
	if rel == "." {
		d, err := openDirNoLinks(root, rel)
		if err != nil {
			return nil, err
		}
		defer d.Close()
		return d.Stat()
	}
	dir, base, err := openParentNoLinks(root, rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return lstatAt(dir, base)
}

// openFileNoLinks opens the file rel with flags (O_NOFOLLOW added): a
// link at rel or on the way is refused, for why.
func openFileNoLinks(root *os.Root, rel string, flags int, perm uint32, why string) (*os.File, error) {
	dir, base, err := openParentNoLinks(root, rel)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	fd, err := unix.Openat(int(dir.Fd()), base, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if errors.Is(err, unix.ELOOP) {
		return nil, &linkAt{why: why}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: base, Err: err}
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// mkdirAllNoLinks makes rel and its missing parents in root with perm,
// refusing links on the way.
func mkdirAllNoLinks(root *os.Root, rel string, perm fs.FileMode) error {
	elems, err := elements(rel)
	if err != nil {
		return err
	}
	dir, err := openDirNoLinks(root, ".")
	if err != nil {
		return err
	}
	defer func() { dir.Close() }()
	for i, e := range elems {
		fd := int(dir.Fd())
		next, err := unix.Openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			if err := unix.Mkdirat(fd, e, uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
				return &fs.PathError{Op: "mkdir", Path: e, Err: err}
			}
			next, err = unix.Openat(fd, e, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		}
		if err != nil {
			return whyNotDir(fd, e, len(elems)-1-i, err)
		}
		dir.Close()
		dir = os.NewFile(uintptr(next), e)
	}
	return nil
}

// readDirNoLinks lists rel in root without following links: entries that
// are links are listed as links.
func readDirNoLinks(root *os.Root, rel string) ([]fs.FileInfo, error) {
	d, err := openDirNoLinks(root, rel)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, 0, len(names))
	for _, n := range names {
		fi, err := lstatAt(d, n)
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, fi)
	}
	return out, nil
}

// lstatInfo is an fs.FileInfo from fstatat(2), a link described as one.
type lstatInfo struct {
	name string
	st   unix.Stat_t
}

func (i *lstatInfo) Name() string       { return i.name }
func (i *lstatInfo) Size() int64        { return i.st.Size }
func (i *lstatInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *lstatInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *lstatInfo) Sys() any           { return &i.st }

func (i *lstatInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
