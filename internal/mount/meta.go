package mount

import (
	"context"
	"errors"
	"os"
	"path"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"

	"sitebox/internal/store"
)

// caller is the view of the request's caller; a refusal is logged with
// its reason and answered EACCES.
func (m *fsys) caller(h *fuse.InHeader) (*View, fuse.Status) {
	v, err := m.cfg.Identities.For(h.Uid)
	if err != nil {
		m.log.Warn("caller refused", "uid", h.Uid, "pid", h.Pid, "reason", err.Error())
		return nil, fuse.EACCES
	}
	return v, fuse.OK
}

// info describes the path rel (below the mount's root) as v sees it.
func (m *fsys) info(ctx context.Context, v *View, rel string) (store.FileInfo, error) {
	if rel == "/" {
		return m.statPath(ctx, v, m.storePath(rel))
	}
	dir, name := path.Split(rel)
	return m.entry(ctx, v, path.Clean(dir), name)
}

// entry describes name in the directory dir (below the mount's root)
// from the directory's listing, fetched once for all its names; where v
// may not list the directory, the path alone is asked about.
func (m *fsys) entry(ctx context.Context, v *View, dir, name string) (store.FileInfo, error) {
	sp := m.storePath(dir)
	l := m.dirs.listing(v.Key, sp)
	if l == nil {
		var err error
		if l, err = m.list(ctx, v, sp); err != nil {
			if isNotExist(err) || errors.Is(err, store.ErrNotDir) || unreachable(err) {
				// A server that did not answer the listing in the
				// client's time would not answer the stat either.
				return store.FileInfo{}, err
			}
			return m.statPath(ctx, v, path.Join(sp, name))
		}
	}
	if fi, ok := l.entries[name]; ok {
		return fi, nil
	}
	return store.FileInfo{}, &store.PathError{Op: "lookup", Path: path.Join(sp, name), Err: store.ErrNotFound}
}

// list lists the directory sp with stat information and keeps it.
func (m *fsys) list(ctx context.Context, v *View, sp string) (*cached, error) {
	fis, err := v.Meta.List(ctx, sp)
	if err != nil {
		return nil, err
	}
	return m.dirs.putListing(v.Key, sp, fis), nil
}

// known describes rel from what the mount holds (a fresh listing of its
// directory, returned too, or a fresh stat), never asking the server.
func (m *fsys) known(v *View, rel string) (store.FileInfo, *cached, bool) {
	sp := m.storePath(rel)
	if l := m.dirs.listing(v.Key, path.Dir(sp)); l != nil {
		fi, ok := l.entries[path.Base(sp)]
		return fi, l, ok
	}
	if c := m.dirs.stat(v.Key, sp); c != nil && c.err == nil {
		return c.fi, nil, true
	}
	return store.FileInfo{}, nil, false
}

// changed forgets what the mount held about the paths given (store
// paths), after it changed them on the server.
func (m *fsys) changed(paths ...string) {
	m.dirs.invalidate(paths...)
	m.small.forget(paths...)
}

// statPath asks about sp alone, keeping the answer ("not there" too).
func (m *fsys) statPath(ctx context.Context, v *View, sp string) (store.FileInfo, error) {
	if c := m.dirs.stat(v.Key, sp); c != nil {
		return c.fi, c.err
	}
	fi, err := v.Meta.Stat(ctx, sp)
	if err == nil || isNotExist(err) {
		m.dirs.putStat(v.Key, sp, fi, err)
	}
	return fi, err
}

// fillAttr describes fi as the inode ino to the kernel.
func (m *fsys) fillAttr(a *fuse.Attr, ino uint64, fi store.FileInfo) {
	perm := uint32(fi.Mode.Perm())
	a.Ino = ino
	if fi.IsDir() {
		if perm == 0 {
			perm = 0o755
		}
		a.Mode, a.Nlink, a.Size = syscall.S_IFDIR|perm|0o500, 2, 4096
	} else {
		if perm == 0 {
			perm = 0o644
		}
		a.Mode, a.Nlink, a.Size = syscall.S_IFREG|perm|0o400, 1, uint64(max(fi.Size, 0))
		if w := m.writer(ino); w != nil {
			a.Size = uint64(w.size())
		}
	}
	if m.cfg.ReadOnly {
		a.Mode &^= 0o222
	}
	t := fi.ModTime
	a.SetTimes(&t, &t, &t)
	a.Blocks = (a.Size + 511) / 512
	a.Blksize = ioSize
	// The server decides who may do what, with the caller's credential;
	// the files belong to the mount's user. Never to the caller: a tool
	// that removes "what this user owns" (tmpreaper, a batch system's
	// sweep of a slot user's leftovers in /tmp) would remove the
	// server's files through the mount.
	a.Owner = fuse.Owner{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
}

// entryOut answers a LOOKUP (or CREATE, MKDIR) with name in parent.
func (m *fsys) entryOut(out *fuse.EntryOut, parent uint64, name string, fi store.FileInfo) fuse.Status {
	ino, ok := m.nodes.lookup(parent, name)
	if !ok {
		return fuse.ENOENT
	}
	out.NodeId, out.Generation = ino, 0
	m.fillAttr(&out.Attr, ino, fi)
	out.SetEntryTimeout(m.cfg.EntryTimeout)
	out.SetAttrTimeout(m.cfg.AttrTimeout)
	return fuse.OK
}

func (m *fsys) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	dir, ok := m.nodes.path(h.NodeId)
	if !ok {
		return fuse.ENOENT
	}
	v, st := m.caller(h)
	if !st.Ok() {
		return st
	}
	fi, err := m.entry(reqCtx(cancel), v, dir, name)
	if isNotExist(err) && m.cfg.NegativeTimeout > 0 {
		// "No such file", cached by the kernel as a negative entry.
		out.NodeId = 0
		out.SetEntryTimeout(m.cfg.NegativeTimeout)
		return fuse.OK
	}
	if err != nil {
		return m.errno("lookup", path.Join(dir, name), v, err)
	}
	return m.entryOut(out, h.NodeId, name, fi)
}

func (m *fsys) Forget(ino, count uint64) {
	if !m.nodes.forget(ino, count) {
		m.inodes.forget(ino)
	}
}

func (m *fsys) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	rel, ok := m.nodes.path(in.NodeId)
	if !ok {
		if w := m.writer(in.NodeId); w != nil { // unlinked, still open
			m.fillAttr(&out.Attr, in.NodeId, store.FileInfo{Size: w.size(), Mode: 0o644})
			return fuse.OK
		}
		return fuse.ENOENT
	}
	v, st := m.caller(&in.InHeader)
	if !st.Ok() {
		return st
	}
	fi, err := m.info(reqCtx(cancel), v, rel)
	if err != nil {
		return m.errno("getattr", rel, v, err)
	}
	m.fillAttr(&out.Attr, in.NodeId, fi)
	out.SetTimeout(m.cfg.AttrTimeout)
	return fuse.OK
}

// StatFs reports the server's space where it says (a SpaceReporter),
// else a petabyte free: programs that check for room before writing
// must not stop on a server that does not tell.
func (m *fsys) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	const bsize = 4096
	total, free := int64(1<<50), int64(1<<50)
	if v, st := m.caller(h); st.Ok() {
		if sr, ok := store.As[store.SpaceReporter](v.Meta); ok {
			if sp, err := sr.Space(reqCtx(cancel), m.cfg.Root); err == nil && sp.Total > 0 {
				total, free = sp.Total, sp.Free
			}
		}
	}
	*out = fuse.StatfsOut{Blocks: uint64(total / bsize), Bfree: uint64(free / bsize), Bavail: uint64(free / bsize),
		Files: 1 << 30, Ffree: 1 << 30, Bsize: ioSize, Frsize: bsize, NameLen: 255}
	return fuse.OK
}
