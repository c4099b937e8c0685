package origin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

// attrPrefix puts clients' attributes in xrootd's user namespace ("U."
// under the OS's "user."): `xrdfs xattr f set a=1` is "user.U.a" on
// disk, whichever of xrootd and sitebox serves the file, and sitebox's
// own attributes (kept checksums) are out of the clients' reach.
const attrPrefix = "user.U."

var _ store.Attributer = (*Origin)(nil)

// Attrs does q on the attributes of name, in the pool that holds it.
// Changes need a writable export.
func (o *Origin) Attrs(ctx context.Context, name string, q store.AttrQuery) ([]store.Attr, error) {
	op := q.Op.String()
	var ex *export
	var rel string
	if q.Op.Changes() {
		var err error
		if _, ex, rel, err = o.writable(op, name); err != nil {
			return nil, err
		}
	} else {
		var ok bool
		if ex, rel, ok = o.resolve(name); !ok {
			return nil, wrap(op, name, fmt.Errorf("%w: the directories above the exports keep no attributes", store.ErrUnsupported))
		}
	}
	// A change goes through no link (nolinks.go); a read follows them.
	changes := q.Op.Changes()
	find := ex.find
	if changes {
		find = ex.findNoLinks
	}
	p, fi, err := find(rel)
	if err != nil {
		return nil, wrap(op, name, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, wrap(op, name, &linkAt{why: whyThrough})
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		// Opening a device or a FIFO could have effects of its own.
		return nil, wrap(op, name, fmt.Errorf("%w: only files and directories have attributes", store.ErrUnsupported))
	}
	// O_NONBLOCK: a FIFO someone made in a pool must not hold the request.
	var f *os.File
	switch {
	case changes && rel == ".":
		f, err = openDirNoLinks(p.dirRoot(), rel)
	case changes:
		f, err = openFileNoLinks(p.dirRoot(), rel, os.O_RDONLY|syscall.O_NONBLOCK, 0, whyThrough)
	default:
		f, err = p.dirRoot().OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, wrap(op, name, err)
	}
	defer f.Close()
	return ex.attrs.do(int(f.Fd()), name, q)
}

// Attrs implements store.AttrFile for an open file: an upload sets the
// attributes of the file it is writing.
func (f *file) Attrs(q store.AttrQuery) ([]store.Attr, error) {
	return f.ex.attrs.do(int(f.f.Fd()), f.name, q)
}

// attrKeeper serialises changes of attributes so that the per-file count
// is checked and kept in one step. Safe for concurrent use.
type attrKeeper struct {
	mu sync.Mutex // held while changing attributes
}

// do does q on the file open as fd (named name in errors).
func (k *attrKeeper) do(fd int, name string, q store.AttrQuery) ([]store.Attr, error) {
	op := q.Op.String()
	if err := q.Check(); err != nil {
		return nil, wrap(op, name, err)
	}
	if q.Op == store.AttrList {
		return listAttrs(fd, name)
	}
	if q.Op.Changes() {
		k.mu.Lock()
		defer k.mu.Unlock()
	}
	var have map[string]bool
	if q.Op == store.AttrSet {
		names, err := attrNames(fd)
		if err != nil {
			return nil, wrap(op, name, err)
		}
		have = map[string]bool{}
		for _, n := range names {
			have[n] = true
		}
	}
	out := make([]store.Attr, len(q.Attrs))
	for i, a := range q.Attrs {
		out[i] = store.Attr{Name: a.Name}
		switch q.Op {
		case store.AttrGet:
			out[i].Value, out[i].Err = getAttr(fd, a.Name)
		case store.AttrDel:
			out[i].Err = attrErr(unix.Fremovexattr(fd, attrPrefix+a.Name))
		case store.AttrSet:
			if !have[a.Name] && len(have) >= store.MaxAttrsPerFile {
				out[i].Err = fmt.Errorf("%w: the file has %d attributes, the most one may have", store.ErrNoSpace, store.MaxAttrsPerFile)
				continue
			}
			flags := 0
			if q.Exclusive {
				flags = unix.XATTR_CREATE
			}
			if out[i].Err = attrErr(unix.Fsetxattr(fd, attrPrefix+a.Name, a.Value, flags)); out[i].Err == nil {
				have[a.Name] = true
			}
		}
	}
	return out, nil
}

// attrNames lists the user attributes' names, without the prefix.
func attrNames(fd int) ([]string, error) {
	var buf []byte
	for {
		n, err := unix.Flistxattr(fd, buf)
		if err == nil && buf != nil {
			buf = buf[:n]
			break
		}
		if err != nil && !errors.Is(err, unix.ERANGE) {
			return nil, attrErr(err)
		}
		if err == nil { // the size; the list may grow meanwhile
			buf = make([]byte, n+256)
		} else {
			buf = make([]byte, 2*len(buf)+256)
		}
	}
	var names []string
	for _, n := range strings.Split(string(buf), "\x00") {
		if rest, ok := strings.CutPrefix(n, attrPrefix); ok && rest != "" {
			names = append(names, rest)
		}
	}
	return names, nil
}

// maxListBytes bounds a listing's names and values together: a file
// given many large attributes elsewhere (a file system that holds them)
// must not make every listing a large allocation.
const maxListBytes = 1 << 20

func listAttrs(fd int, name string) ([]store.Attr, error) {
	names, err := attrNames(fd)
	if err != nil {
		return nil, wrap("listxattr", name, err)
	}
	out := make([]store.Attr, 0, len(names))
	total := 0
	for _, n := range names {
		v, err := getAttr(fd, n)
		if errors.Is(err, store.ErrNoAttr) {
			continue // removed meanwhile
		}
		if total += len(n) + len(v); total > maxListBytes {
			return nil, wrap("listxattr", name, fmt.Errorf("%w: listing attributes of more than %d bytes; get them by name", store.ErrUnsupported, maxListBytes))
		}
		out = append(out, store.Attr{Name: n, Value: v, Err: err})
	}
	return out, nil
}

// getAttr reads one attribute, whatever its size (up to the limit).
func getAttr(fd int, name string) ([]byte, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Fgetxattr(fd, attrPrefix+name, buf)
		if err == nil {
			return buf[:n], nil
		}
		if !errors.Is(err, unix.ERANGE) || len(buf) > store.MaxAttrValueLen {
			return nil, attrErr(err)
		}
		buf = make([]byte, store.MaxAttrValueLen+1)
	}
}

// attrErr turns an errno of the attribute calls into the store's terms.
func attrErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ENODATA):
		return store.ErrNoAttr
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("%w: the attribute is already set", store.ErrExist)
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.E2BIG), errors.Is(err, unix.ERANGE):
		return fmt.Errorf("%w: the file system has no room for the attribute", store.ErrNoSpace)
	case errors.Is(err, unix.ENOTSUP):
		return fmt.Errorf("%w: the file system keeps no user attributes", store.ErrUnsupported)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: %v", store.ErrPermission, err)
	}
	return fmt.Errorf("%w: %v", store.ErrIO, err)
}
