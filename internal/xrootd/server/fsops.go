package server

import (
	"bytes"
	"errors"
	"fmt"
	"path"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// namespace returns the store's Namespace, or why path cannot be changed.
// It is asked after the route: a director has no Namespace of its own and
// sends the change to the server holding the path.
func (s *session) namespace(op, path string) (store.Namespace, error) {
	if s.srv.cfg.ReadOnly {
		return nil, errReadOnly(op, path)
	}
	ns, ok := store.As[store.Namespace](s.srv.store)
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", op, path, store.ErrUnsupported)
	}
	return ns, nil
}

// doMkdir creates a directory; kXR_mkdirpath creates missing parents and
// accepts an existing directory, like mkdir -p. Without it an existing
// directory is accepted only as XRootD does (mkdirAgain).
func (s *session) doMkdir(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path, parents := name.Path, req.Body[0]&proto.MkdirPath != 0
	ctx := s.reqCtx(cgi)
	if name.Dot && !parents {
		// "d/." resolves through d, so d must already be there: mkdir(2)
		// answers ENOENT, and XRootD with it.
		if err := name.Check(ctx, s.srv.store, "mkdir", store.Inspect); err != nil {
			return err
		}
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "mkdir", Path: path}); done || err != nil {
		return err
	}
	ns, err := s.namespace("mkdir", path)
	if err != nil {
		return err
	}
	perm := modeFromXrd(req.U16(14))
	if perm == 0 {
		perm = 0o755
	}
	if err := ns.Mkdir(ctx, path, perm, parents); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doRm removes a file.
func (s *session) doRm(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path, ctx := name.Path, s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "rm", store.Unlink); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "rm", Path: path}); done || err != nil {
		return err
	}
	ns, err := s.namespace("rm", path)
	if err != nil {
		return err
	}
	err = ns.Remove(ctx, path)
	if errors.Is(err, store.ErrIsDir) {
		// XRootD's rm removes an empty directory too (XrdOssSys::Unlink);
		// fsspec's recursive rm counts on it.
		err = ns.Rmdir(ctx, path)
	}
	if err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doRmdir removes an empty directory.
func (s *session) doRmdir(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path, ctx := name.Path, s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "rmdir", store.Unlink); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "rmdir", Path: path}); done || err != nil {
		return err
	}
	ns, err := s.namespace("rmdir", path)
	if err != nil {
		return err
	}
	if err := ns.Rmdir(ctx, path); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doMv renames: the payload holds the two paths separated by a space, the
// first arg1len bytes long (or, from old clients with arg1len 0, up to the
// first space).
func (s *session) doMv(req *proto.Request) error {
	data := req.Data
	var from, to []byte
	if n := int(int16(req.U16(14))); n != 0 {
		if n < 0 || n >= len(data) || data[n] != ' ' {
			return errorf(proto.ErrArgInvalid, "mv: invalid path specification (arg1len %d for %d bytes)", n, len(data))
		}
		from, to = data[:n], data[n+1:]
	} else {
		var ok bool
		from, to, ok = bytes.Cut(data, []byte{' '})
		if !ok {
			return errorf(proto.ErrArgMissing, "mv: no new path given")
		}
		to = bytes.TrimLeft(to, " ")
	}
	if len(to) == 0 || len(to) == 1 && to[0] == 0 {
		return errorf(proto.ErrArgMissing, "mv: no new path given")
	}
	srcName, srcCGI, err := argPath(from)
	if err != nil {
		return err
	}
	dstName, dstCGI, err := argPath(to)
	if err != nil {
		return err
	}
	src, dst := srcName.Path, dstName.Path
	// XrdCl appends a redirect's CGI to the new path of a resent mv, while
	// a caller may have put its own on either: the store sees both.
	ctx := s.reqCtx(joinCGI(srcCGI, dstCGI))
	if err := store.CheckMove(ctx, s.srv.store, "mv", srcName, dstName, true); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "mv", Path: src}); done || err != nil {
		return err
	}
	ns, err := s.namespace("mv", src)
	if err != nil {
		return err
	}
	err = ns.Rename(ctx, src, dst)
	if errors.Is(err, store.ErrNotFound) && path.Dir(dst) != "/" {
		// XRootD creates the new name's missing parents
		// (XrdOssSys::Rename); the source must still exist.
		if _, serr := s.srv.store.Stat(ctx, src); serr == nil {
			if merr := ns.Mkdir(ctx, path.Dir(dst), 0o755, true); merr == nil {
				err = ns.Rename(ctx, src, dst)
			}
		}
	}
	if err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doChmod changes permissions.
func (s *session) doChmod(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path, ctx := name.Path, s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, "chmod", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "chmod", Path: path}); done || err != nil {
		return err
	}
	ns, err := s.namespace("chmod", path)
	if err != nil {
		return err
	}
	if err := ns.Chmod(ctx, path, modeFromXrd(req.U16(14))); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doPrepare accepts staging requests: every file on a disk server is
// online already, so there is nothing to stage. As xrootd without a
// staging backend, a file that does not exist is not an error (the paths
// are still checked), and a staging prepare (kXR_stage, prepare -s) is
// answered with a request id. Cancels and evictions are no-ops.
func (s *session) doPrepare(req *proto.Request) error {
	const cancel, stage = 1, 8
	if req.Body[0]&cancel == 0 {
		for _, l := range bytes.Split(bytes.TrimRight(req.Data, "\x00\n"), []byte{'\n'}) {
			if len(l) == 0 {
				continue
			}
			name, cgi, err := argPath(l)
			if err != nil {
				return err
			}
			ctx := s.reqCtx(cgi)
			if done, err := s.routed(ctx, req, store.Call{Op: "stat", Path: name.Path}); done || err != nil {
				return err
			}
		}
	}
	if req.Body[0]&(cancel|stage) == stage {
		return s.sendOK(req.Stream, []byte(s.srv.prepIDs.next(s.srv)))
	}
	return s.sendOK(req.Stream, nil)
}
