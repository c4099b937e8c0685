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
	p, fi, err := ex.find(rel)
	switch {
	case err == nil && fi.IsDir():
		return nil, wrap("create", name, store.ErrIsDir)
	case err == nil && opts.Exclusive:
		return nil, wrap("create", name, store.ErrExist)
	case err == nil:
		flags := os.O_RDWR
		if opts.Truncate {
			flags |= os.O_TRUNC
		}
		f, err := p.dirRoot().OpenFile(rel, flags, perm)
		if err != nil {
			return nil, wrap("create", name, err)
		}
		return &writable{file{f: f, ex: ex, name: name}}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, wrap("create", name, err)
	case opts.Update:
		return nil, wrap("create", name, store.ErrNotFound)
	}

	parent := path.Dir(rel)
	if parent != "." {
		if _, pfi, err := ex.find(parent); err != nil {
			if !errors.Is(err, fs.ErrNotExist) || !opts.MkParents {
				return nil, wrap("create", name, err)
			}
		} else if !pfi.IsDir() {
			return nil, wrap("create", name, store.ErrNotDir)
		}
	}
	p = ex.emptiest()
	if parent != "." {
		// The parent exists in the merged namespace (or MkParents asked for
		// it) but perhaps not on the chosen pool.
		if err := p.dirRoot().MkdirAll(parent, 0o755); err != nil {
			return nil, wrap("create", name, err)
		}
	}
	f, err := p.dirRoot().OpenFile(rel, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, wrap("create", name, err)
	}
	return &writable{file{f: f, ex: ex, name: name}}, nil
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
// may live on another pool: the namespace is the union).
func (o *Origin) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	name, ex, rel, err := o.writable("mkdir", name)
	if err != nil {
		return err
	}
	if perm.Perm() == 0 {
		perm = 0o755
	}
	if _, fi, err := ex.find(rel); err == nil {
		if parents && fi.IsDir() {
			return nil
		}
		return wrap("mkdir", name, store.ErrExist)
	}
	parent := path.Dir(rel)
	if !parents && parent != "." {
		if _, pfi, err := ex.find(parent); err != nil {
			return wrap("mkdir", name, err)
		} else if !pfi.IsDir() {
			return wrap("mkdir", name, store.ErrNotDir)
		}
	}
	return wrap("mkdir", name, ex.emptiest().dirRoot().MkdirAll(rel, perm.Perm()))
}

// Remove deletes a file from every pool holding it.
func (o *Origin) Remove(ctx context.Context, name string) error {
	name, ex, rel, err := o.writable("rm", name)
	if err != nil {
		return err
	}
	removed := false
	for _, p := range ex.pools {
		fi, err := p.dirRoot().Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return wrap("rm", name, err)
		}
		if fi.IsDir() {
			return wrap("rm", name, store.ErrIsDir)
		}
		if err := p.dirRoot().Remove(rel); err != nil {
			return wrap("rm", name, err)
		}
		removed = true
	}
	if !removed {
		return wrap("rm", name, fs.ErrNotExist)
	}
	return nil
}

// Rmdir removes an empty directory, which must be empty in the merged view.
func (o *Origin) Rmdir(ctx context.Context, name string) error {
	name, ex, rel, err := o.writable("rmdir", name)
	if err != nil {
		return err
	}
	if rel == "." {
		return wrap("rmdir", name, fmt.Errorf("%w: cannot remove an export's top directory", store.ErrPermission))
	}
	entries, err := o.List(ctx, name)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return wrap("rmdir", name, store.ErrNotEmpty)
	}
	removed := false
	for _, p := range ex.pools {
		fi, err := p.dirRoot().Lstat(rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err == nil && !fi.IsDir() {
			return wrap("rmdir", name, store.ErrNotDir)
		}
		if err := p.dirRoot().Remove(rel); err != nil {
			return wrap("rmdir", name, err)
		}
		removed = true
	}
	if !removed {
		return wrap("rmdir", name, fs.ErrNotExist)
	}
	return nil
}

// Rename moves a file or directory within its pool. Both names must be in
// the same export; a destination file on another pool is removed so the
// merged namespace never shows two versions.
func (o *Origin) Rename(ctx context.Context, from, to string) error {
	from, ex, rel, err := o.writable("mv", from)
	if err != nil {
		return err
	}
	to, ex2, rel2, err := o.writable("mv", to)
	if err != nil {
		return err
	}
	if ex != ex2 {
		return wrap("mv", from, fmt.Errorf("%w: source and destination are in different exports", store.ErrUnsupported))
	}
	if rel == "." || rel2 == "." {
		return wrap("mv", from, fmt.Errorf("%w: cannot move an export's top directory", store.ErrPermission))
	}
	src, sfi, err := ex.find(rel)
	if err != nil {
		return wrap("mv", from, err)
	}
	if to == from {
		return nil // rename(2) onto itself does nothing, and succeeds
	}
	if store.HasPrefix(to, from) {
		return wrap("mv", from, fmt.Errorf("%w: cannot move a directory into itself", store.ErrInvalid))
	}
	if parent := path.Dir(rel2); parent != "." {
		_, pfi, err := ex.find(parent)
		if err != nil {
			return wrap("mv", to, err)
		}
		if !pfi.IsDir() {
			return wrap("mv", to, store.ErrNotDir)
		}
		if err := src.dirRoot().MkdirAll(parent, 0o755); err != nil {
			return wrap("mv", to, err)
		}
	}
	for _, p := range ex.pools {
		if p == src {
			continue
		}
		if fi, err := p.dirRoot().Lstat(rel2); err == nil {
			if fi.IsDir() || sfi.IsDir() {
				return wrap("mv", to, store.ErrExist)
			}
			if err := p.dirRoot().Remove(rel2); err != nil {
				return wrap("mv", to, err)
			}
		}
	}
	return wrap("mv", from, src.dirRoot().Rename(rel, rel2))
}

// Chmod changes permissions on every pool holding name.
func (o *Origin) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	name, ex, rel, err := o.writable("chmod", name)
	if err != nil {
		return err
	}
	changed := false
	for _, p := range ex.pools {
		err := p.dirRoot().Chmod(rel, perm.Perm())
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return wrap("chmod", name, err)
		}
		changed = true
	}
	if !changed {
		return wrap("chmod", name, fs.ErrNotExist)
	}
	return nil
}

// LockWriter implements store.WriterLocker: one writer per file for
// every frontend of this box.
func (o *Origin) LockWriter(name string, owner any) (func(), error) {
	return o.writers.LockWriter(name, owner)
}
