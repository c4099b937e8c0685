package server

import (
	"strings"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// namespace returns the store's namespace operations, refusing changes on a
// read-only server and on stores that cannot change the namespace.
func (s *session) namespace(op, path string) (store.Namespace, error) {
	if err := s.refuseIfReadOnly(op, path); err != nil {
		return nil, err
	}
	ns, ok := s.srv.store.(store.Namespace)
	if !ok {
		return nil, &store.PathError{Op: op, Path: path, Err: store.ErrUnsupported}
	}
	return ns, nil
}

func (s *session) doMkdir(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	ns, err := s.namespace("mkdir", path)
	if err != nil {
		return err
	}
	if err := ns.Mkdir(s.ctx, path, modeArg(req.U16(14)), req.Body[0]&proto.MkdirPath != 0); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

func (s *session) doRm(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	ns, err := s.namespace("rm", path)
	if err != nil {
		return err
	}
	if err := ns.Remove(s.ctx, path); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

func (s *session) doRmdir(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	ns, err := s.namespace("rmdir", path)
	if err != nil {
		return err
	}
	if err := ns.Rmdir(s.ctx, path); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doMv renames: the payload is "source destination"; arg1len, when set,
// gives the source's length so names may contain spaces.
func (s *session) doMv(req *proto.Request) error {
	data := strings.TrimSuffix(string(req.Data), "\x00")
	var src, dst string
	if n := int(int16(req.U16(14))); n > 0 && n < len(data) {
		src, dst = data[:n], strings.TrimPrefix(data[n:], " ")
	} else {
		var ok bool
		if src, dst, ok = strings.Cut(data, " "); !ok {
			return errorf(proto.ErrArgMissing, "mv needs a source and a destination")
		}
	}
	from, _, err := pathArg([]byte(src))
	if err != nil {
		return err
	}
	to, _, err := pathArg([]byte(dst))
	if err != nil {
		return err
	}
	ns, err := s.namespace("mv", from)
	if err != nil {
		return err
	}
	if err := ns.Rename(s.ctx, from, to); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

func (s *session) doChmod(req *proto.Request) error {
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	ns, err := s.namespace("chmod", path)
	if err != nil {
		return err
	}
	if err := ns.Chmod(s.ctx, path, modeArg(req.U16(14))); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doPrepare accepts staging hints: everything here is already online.
func (s *session) doPrepare(req *proto.Request) error {
	return s.sendOK(req.Stream, nil)
}
