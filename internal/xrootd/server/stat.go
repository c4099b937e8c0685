package server

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os/user"
	"strconv"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// identity is the owner and group shown in extended stat lines. The store
// does not report owners; files are owned by the account the server runs
// as, so that is what XRootD shows for them too.
type identity struct{ user, group string }

func currentIdentity() identity {
	id := identity{user: "sitebox", group: "sitebox"}
	u, err := user.Current()
	if err != nil {
		return id
	}
	id.user = u.Username
	id.group = u.Gid
	if g, err := user.LookupGroupId(u.Gid); err == nil {
		id.group = g.Name
	}
	return id
}

// statFlags computes XRootD's kXR_stat flags for fi.
func (s *session) statFlags(fi store.FileInfo) int {
	flags := proto.StatFlagFile
	perm := fi.Mode.Perm()
	switch {
	case fi.IsDir():
		flags |= proto.StatFlagIsDir
	case !fi.Mode.IsRegular():
		flags |= proto.StatFlagOther
	}
	if perm&0o444 != 0 {
		flags |= proto.StatFlagReadable
	}
	if perm&0o222 != 0 && fi.Writable && !s.srv.cfg.ReadOnly {
		flags |= proto.StatFlagWritable
	}
	if perm&0o111 != 0 {
		flags |= proto.StatFlagXset
	}
	return flags
}

// statLine formats fi as XRootD's stat answer: "id size flags mtime" and
// the extended "ctime atime mode owner group" that dirlist -l shows.
func (s *session) statLine(fi store.FileInfo) string {
	b := make([]byte, 0, 96)
	return string(s.appendStat(b, fi))
}

func (s *session) appendStat(b []byte, fi store.FileInfo) []byte {
	mtime := fi.ModTime.Unix()
	if fi.ModTime.IsZero() {
		mtime = 0
	}
	// Unsigned, as xrootd writes it: an ID with its top bit set (device
	// and inode mixed) would read as a negative number.
	b = strconv.AppendUint(b, fi.ID, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, fi.Size, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(s.statFlags(fi)), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, mtime, 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, mtime, 10) // ctime: not kept by the store
	b = append(b, ' ')
	b = strconv.AppendInt(b, mtime, 10) // atime: likewise
	b = fmt.Appendf(b, " %04o %s %s", posixMode(fi.Mode), s.srv.ident.user, s.srv.ident.group)
	return b
}

// posixMode returns the permission and set-id bits of m as st_mode has them.
func posixMode(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// doStat answers kXR_stat for a path, an open handle (no payload), or with
// kXR_vfs the file system holding a path.
func (s *session) doStat(req *proto.Request) error {
	if len(req.Data) == 0 {
		if req.Body[0]&proto.StatVFS != 0 {
			return errorf(proto.ErrArgMissing, "stat of a file system needs a path")
		}
		of, err := s.files.acquire(req.Handle(12))
		if err != nil {
			return err
		}
		defer of.release()
		fi, err := s.statOpen(of)
		if err != nil {
			return err
		}
		return s.sendString(req.Stream, s.statLine(fi))
	}
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path, ctx := name.Path, s.reqCtx(cgi)
	if req.Body[0]&proto.StatVFS != 0 {
		return s.statVFS(ctx, req, path) // of the space holding path, as XRootD: "/" or not
	}
	if err := name.Check(ctx, s.srv.store, "stat", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "stat", Path: path}); done || err != nil {
		return err
	}
	fi, err := s.srv.store.Stat(ctx, path)
	if err != nil {
		return err
	}
	return s.sendString(req.Stream, s.statLine(fi))
}

// statVFS answers "nodesRW freeMiB util% nodesStaging freeMiB util%", as
// XRootD's oss does for a disk server (no staging).
func (s *session) statVFS(ctx context.Context, req *proto.Request, path string) error {
	var free, util int64
	writable := int64(1)
	if s.srv.cfg.ReadOnly {
		writable = 0
	}
	if sr, ok := store.As[store.SpaceReporter](s.srv.store); ok && writable == 1 {
		if done, err := s.routed(ctx, req, store.Call{Op: "space", Path: path}); done || err != nil {
			return err
		}
		sp, err := sr.Space(ctx, path)
		if err != nil {
			return err
		}
		free = min(sp.Free>>20, 0x7fffffff)
		if sp.Total > 0 {
			util = (sp.Total - sp.Free) * 100 / sp.Total
		}
	}
	return s.sendString(req.Stream, fmt.Sprintf("%d %d %d 0 0 0", writable, free, util))
}

// doStatx answers one flag byte per path of a newline-separated list.
func (s *session) doStatx(req *proto.Request) error {
	lines := bytes.Split(bytes.TrimRight(req.Data, "\x00\n"), []byte{'\n'})
	out := make([]byte, 0, len(lines))
	for _, l := range lines {
		name, cgi, err := argPath(l)
		if err != nil {
			return err
		}
		path, ctx := name.Path, s.reqCtx(cgi)
		if err := name.Check(ctx, s.srv.store, "stat", store.Inspect); err != nil {
			return err
		}
		if done, err := s.routed(ctx, req, store.Call{Op: "stat", Path: path}); done || err != nil {
			return err
		}
		fi, err := s.srv.store.Stat(ctx, path)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			out = append(out, proto.StatFlagIsDir)
		} else {
			out = append(out, proto.StatFlagFile)
		}
	}
	return s.sendOK(req.Stream, out)
}
