package origin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"sitebox/internal/store"
)

// withoutOthers is perm with the owner's and group's bits only. The
// box's jobs run on the same machine as unprivileged accounts (slot
// users): a pool file readable by "others" would be readable by any job,
// whatever the token it was submitted with allows. The explicit mode
// holds whatever the process umask, which can only take bits away.
func withoutOthers(perm fs.FileMode) fs.FileMode { return perm.Perm() &^ 0o007 }

// newFileMode and newDirMode are the modes the origin gives what it
// creates: the client's, with the owner's rights added as xrootd adds
// them (read and write on a file, everything on a directory: a directory
// made rw-r--r-- could hold nothing) and none for others.
func newFileMode(perm fs.FileMode) fs.FileMode { return withoutOthers(perm | 0o600) }
func newDirMode(perm fs.FileMode) fs.FileMode  { return withoutOthers(perm | 0o700) }

// writable resolves name for a change, refusing read-only exports and the
// virtual directories above the exports.
func (o *Origin) writable(op, name string) (string, *export, string, error) {
	ex, rel, ok := o.resolve(name)
	if !ok {
		return name, nil, "", wrap(op, name, fmt.Errorf("%w: outside every export", store.ErrPermission))
	}
	if ex.readOnly {
		return name, nil, "", wrap(op, name, store.ErrReadOnly)
	}
	return name, ex, rel, nil
}

// Create opens a file for writing. An existing file is written in the pool
// that holds it; a new one goes to the pool with the most free space.
// Nothing is written through a link (nolinks.go): not a link at name, nor
// one on the way to it.
func (o *Origin) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	name, ex, rel, err := o.writable("create", name)
	if err != nil {
		return nil, err
	}
	if rel == "." {
		return nil, wrap("create", name, store.ErrIsDir)
	}
	perm := opts.Perm.Perm()
	if perm == 0 {
		perm = 0o644
	}
	perm = newFileMode(perm)
	p, fi, err := ex.findNoLinks(rel)
	switch {
	case err == nil && fi.IsDir():
		return nil, wrap("create", name, store.ErrIsDir)
	case err == nil && opts.Exclusive:
		return nil, wrap("create", name, store.ErrExist)
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return nil, wrap("create", name, &linkAt{why: whyWrite})
	case err == nil && !fi.Mode().IsRegular():
		return nil, wrap("create", name, fmt.Errorf("%w: not a regular file", store.ErrInvalid))
	case err == nil:
		flags := os.O_RDWR
		if opts.Truncate {
			flags |= os.O_TRUNC
		}
		f, err := openFileNoLinks(p.dirRoot(), rel, flags, 0, whyWrite)
		if err != nil {
			return nil, wrap("create", name, err)
		}
		return &writable{file{f: f, ex: ex, name: name}}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, wrap("create", name, err)
	case opts.Update:
		return nil, wrap("create", name, store.ErrNotFound)
	}
	return o.createNew(ex, name, rel, perm, opts.MkParents)
}

// createNew makes the new file rel on the pool with the most free space.
func (o *Origin) createNew(ex *export, name, rel string, perm fs.FileMode, mkParents bool) (store.WritableFile, error) {
	parent := path.Dir(rel)
	if parent != "." {
		if err := ex.dirNoLinks(parent); err != nil && (!errors.Is(err, fs.ErrNotExist) || !mkParents) {
			return nil, wrap("create", name, childOf(err))
		}
	}
	p := ex.emptiest()
	if parent != "." {
		// The parent exists in the merged namespace (or MkParents asked for
		// it) but perhaps not on the chosen pool.
		if err := mkdirAllNoLinks(p.dirRoot(), parent, newDirMode(0o755)); err != nil {
			return nil, wrap("create", name, childOf(err))
		}
	}
	f, err := openFileNoLinks(p.dirRoot(), rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, uint32(perm), whyWrite)
	if err != nil {
		return nil, wrap("create", name, err)
	}
	return &writable{file{f: f, ex: ex, name: name}}, nil
}

// childOf adjusts a link refused on the way to a directory for a call
// that named an entry in it.
func childOf(err error) error {
	if la := (*linkAt)(nil); errors.As(err, &la) {
		return &linkAt{up: la.up + 1, why: la.why}
	}
	return err
}

// writable is a pool file open for update.
type writable struct{ file }

func (w *writable) WriteAt(p []byte, off int64) (int, error) {
	n, err := w.f.WriteAt(p, off)
	return n, wrap("write", w.name, err)
}

func (w *writable) Truncate(size int64) error {
	if size < 0 {
		return wrap("truncate", w.name, fmt.Errorf("%w: negative size", store.ErrInvalid))
	}
	return wrap("truncate", w.name, w.f.Truncate(size))
}

func (w *writable) Sync() error { return wrap("sync", w.name, w.f.Sync()) }

// Mkdir creates a directory on the pool with the most free space (parents
// may live on another pool: the namespace is the union), through no link.
func (o *Origin) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	name, ex, rel, err := o.writable("mkdir", name)
	if err != nil {
		return err
	}
	if perm.Perm() == 0 {
		perm = 0o755
	}
	_, fi, err := ex.findNoLinks(rel)
	switch {
	case err == nil && parents && fi.IsDir():
		return nil
	case err == nil && fi.IsDir() && fi.Mode().Perm() == o.madeDirMode(perm):
		// A repeat of the mkdir that made it, as XRootD answers it
		// (XrdOssSys::Mkdir): a client resending its mkdir after a
		// reconnect does not fail; someone else's directory, made with
		// other permissions, still exists.
		return nil
	case err == nil:
		return wrap("mkdir", name, store.ErrExist)
	case !errors.Is(err, fs.ErrNotExist):
		return wrap("mkdir", name, err)
	}
	parent := path.Dir(rel)
	if !parents && parent != "." {
		if err := ex.dirNoLinks(parent); err != nil {
			return wrap("mkdir", name, childOf(err))
		}
	}
	return wrap("mkdir", name, mkdirAllNoLinks(ex.emptiest().dirRoot(), rel, newDirMode(perm)))
}

// LockWriter implements store.WriterLocker: one writer per file for
// every frontend of this box.
func (o *Origin) LockWriter(name string, owner any) (func(), error) {
	return o.writers.LockWriter(name, owner)
}
