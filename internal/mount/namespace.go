package mount

import (
	"context"
	"io/fs"
	"os"
	"path"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// change is what every namespace change starts with: the parent's path,
// the caller's view and the server's Namespace.
func (m *fsys) change(op string, h *fuse.InHeader, name string) (dir string, v *View, ns store.Namespace, st fuse.Status) {
	dir, ok := m.nodes.path(h.NodeId)
	if !ok {
		return "", nil, nil, fuse.ENOENT
	}
	if v, st = m.caller(h); !st.Ok() {
		return "", nil, nil, st
	}
	rel := path.Join(dir, name)
	if m.cfg.ReadOnly {
		return "", nil, nil, m.refuse(op, rel, syscall.EROFS, "the mount is read-only")
	}
	ns, ok = store.As[store.Namespace](v.Meta)
	if !ok {
		return "", nil, nil, m.refuse(op, rel, syscall.EROFS, "the server offers no namespace changes")
	}
	return dir, v, ns, fuse.OK
}

// Create makes the file on the server at once, empty, so it exists for
// every other client from now on (as creat(2) promises); its content
// follows at close.
func (m *fsys) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	dir, ok := m.nodes.path(in.NodeId)
	if !ok {
		return fuse.ENOENT
	}
	v, st := m.caller(&in.InHeader)
	if !st.Ok() {
		return st
	}
	rel := path.Join(dir, name)
	if st := m.mayWrite("create", rel, v); !st.Ok() {
		return st
	}
	ctx, sp := reqCtx(cancel), m.storePath(rel)
	perm := fs.FileMode(in.Mode) & fs.ModePerm
	f, err := store.Create(ctx, v.Meta, sp, store.CreateOptions{Perm: perm, Exclusive: in.Flags&syscall.O_EXCL != 0, Truncate: true})
	if err == nil {
		err = f.Close()
	}
	m.changed(m.storePath(dir), sp)
	if err != nil {
		return m.errno("create", rel, v, err)
	}
	fi := store.FileInfo{Name: name, Mode: perm, ModTime: time.Now(), Writable: true}
	if st := m.entryOut(&out.EntryOut, in.NodeId, name, fi); !st.Ok() {
		return st
	}
	w, _, err := m.acquireWriter(out.NodeId, v)
	if err != nil {
		return m.errno("create", rel, v, err)
	}
	out.Fh = m.addHandle(&writeHandle{w: w})
	return fuse.OK
}

func (m *fsys) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	dir, v, ns, st := m.change("mkdir", &in.InHeader, name)
	if !st.Ok() {
		return st
	}
	ctx, rel := reqCtx(cancel), path.Join(dir, name)
	sp := m.storePath(rel)
	err := ns.Mkdir(ctx, sp, fs.FileMode(in.Mode)&fs.ModePerm, false)
	m.changed(m.storePath(dir), sp)
	if err != nil {
		return m.errno("mkdir", rel, v, err)
	}
	fi, err := m.statPath(ctx, v, sp)
	if err != nil {
		fi = store.FileInfo{Name: name, Mode: fs.ModeDir | 0o755, ModTime: time.Now()}
	}
	return m.entryOut(out, in.NodeId, name, fi)
}

func (m *fsys) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return m.remove(cancel, h, name, "rm", store.Namespace.Remove)
}

func (m *fsys) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	return m.remove(cancel, h, name, "rmdir", store.Namespace.Rmdir)
}

func (m *fsys) remove(cancel <-chan struct{}, h *fuse.InHeader, name, op string, rm func(store.Namespace, context.Context, string) error) fuse.Status {
	dir, v, ns, st := m.change(op, h, name)
	if !st.Ok() {
		return st
	}
	rel := path.Join(dir, name)
	sp := m.storePath(rel)
	err := rm(ns, reqCtx(cancel), sp)
	m.changed(m.storePath(dir), sp)
	if err != nil {
		return m.errno(op, rel, v, err)
	}
	m.nodes.unlink(h.NodeId, name)
	return fuse.OK
}

// renameNoReplace is renameat2's RENAME_NOREPLACE (mv's first try).
const renameNoReplace = 1

// Rename moves a file or directory. RENAME_NOREPLACE is honoured by
// asking about the target first (the servers have no atomic form of it:
// a file another client makes in between is replaced); RENAME_EXCHANGE
// is refused.
func (m *fsys) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	dir, v, ns, st := m.change("mv", &in.InHeader, oldName)
	if !st.Ok() {
		return st
	}
	from := path.Join(dir, oldName)
	if in.Flags&^renameNoReplace != 0 {
		m.log.Debug("mv refused", "path", from, "flags", in.Flags, "reason", "RENAME_EXCHANGE is not supported")
		return fuse.EINVAL
	}
	newDir, ok := m.nodes.path(in.Newdir)
	if !ok {
		return fuse.ENOENT
	}
	ctx, to := reqCtx(cancel), path.Join(newDir, newName)
	if in.Flags&renameNoReplace != 0 {
		if _, err := v.Meta.Stat(ctx, m.storePath(to)); err == nil {
			return fuse.Status(syscall.EEXIST)
		} else if !isNotExist(err) {
			return m.errno("mv", to, v, err)
		}
	}
	err := ns.Rename(ctx, m.storePath(from), m.storePath(to))
	m.changed(m.storePath(dir), m.storePath(newDir), m.storePath(from), m.storePath(to))
	if err != nil {
		return m.errno("mv", from, v, err)
	}
	m.nodes.rename(in.NodeId, oldName, in.Newdir, newName)
	return fuse.OK
}

// SetAttr changes a file's size (truncate) and permissions; owners are
// the server's to keep, and times are accepted without being sent (the
// servers set mtime themselves; refusing would break touch and cp -p).
func (m *fsys) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	rel, ok := m.nodes.path(in.NodeId)
	if !ok && m.writer(in.NodeId) == nil {
		return fuse.ENOENT
	}
	v, st := m.caller(&in.InHeader)
	if !st.Ok() {
		return st
	}
	ctx := reqCtx(cancel)
	if !ownerKept(in) {
		return m.refuse("chown", rel, syscall.EPERM, "the server keeps the owners of files")
	}
	if in.Valid&fuse.FATTR_SIZE != 0 {
		if st := m.truncate(ctx, v, in.NodeId, rel, int64(in.Size)); !st.Ok() {
			return st
		}
	}
	if in.Valid&fuse.FATTR_MODE != 0 {
		if m.cfg.ReadOnly {
			return m.refuse("chmod", rel, syscall.EROFS, "the mount is read-only")
		}
		ns, ok := store.As[store.Namespace](v.Meta)
		if !ok {
			return m.refuse("chmod", rel, syscall.ENOTSUP, "the server offers no chmod")
		}
		sp := m.storePath(rel)
		err := ns.Chmod(ctx, sp, fs.FileMode(in.Mode)&fs.ModePerm)
		m.changed(path.Dir(sp), sp)
		if err != nil {
			return m.errno("chmod", rel, v, err)
		}
	}
	return m.GetAttr(cancel, &fuse.GetAttrIn{InHeader: in.InHeader}, out)
}

// truncate sets the size of a file open for writing, or of one on the
// server (fetched, cut and uploaded again; only cutting to zero sends
// no data both ways).
func (m *fsys) truncate(ctx context.Context, v *View, ino uint64, rel string, size int64) fuse.Status {
	if w := m.writer(ino); w != nil && w.view.Key == v.Key {
		if err := w.truncate(size); err != nil {
			return m.errno("truncate", rel, v, err)
		}
		return fuse.OK
	}
	if st := m.mayWrite("truncate", rel, v); !st.Ok() {
		return st
	}
	w, created, err := m.acquireWriter(ino, v)
	if err != nil {
		return m.errno("truncate", rel, v, err)
	}
	if created && size > 0 {
		err = w.fetch(ctx, m.storePath(rel))
	}
	if err == nil {
		err = w.truncate(size)
	}
	if rerr := m.releaseWriter(ctx, w); err == nil {
		err = rerr
	}
	return m.errno("truncate", rel, v, err)
}

// Links and special files have no place on the servers: EPERM, as
// POSIX has filesystems answer when they cannot hold them.
func (m *fsys) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return m.refuse("ln -s", name, syscall.EPERM, "the servers keep no symbolic links")
}

func (m *fsys) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return m.refuse("ln", name, syscall.EPERM, "the servers keep no hard links")
}

func (m *fsys) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	return m.refuse("mknod", name, syscall.EPERM, "the servers keep only files and directories")
}

// ownerKept reports whether a SETATTR leaves the owner the mount shows
// (the mount's user) as it is: tar and cp -p set it to what it is.
func ownerKept(in *fuse.SetAttrIn) bool {
	if in.Valid&fuse.FATTR_UID != 0 && in.Uid != uint32(os.Getuid()) {
		return false
	}
	return in.Valid&fuse.FATTR_GID == 0 || in.Gid == uint32(os.Getgid())
}
