package server

import (
	"encoding/binary"
	"io/fs"
	"net/url"
	"strings"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// pathArg decodes a request's path payload: one trailing NUL is allowed (C
// clients send it); the "?cgi" part is split off and parsed, never part of
// the path; the path is cleaned and refused if it could escape.
func pathArg(data []byte) (string, url.Values, error) {
	raw := strings.TrimSuffix(string(data), "\x00")
	if raw == "" {
		return "", nil, errorf(proto.ErrArgMissing, "path argument missing")
	}
	p, opaque := store.SplitOpaque(raw)
	clean, err := store.CleanPath(p)
	if err != nil {
		return "", nil, err
	}
	cgi, _ := url.ParseQuery(opaque) // malformed pairs are ignored, as XRootD does
	return clean, cgi, nil
}

func (s *session) refuseIfReadOnly(op, path string) error {
	if s.srv.cfg.ReadOnly {
		return &store.PathError{Op: op, Path: path, Err: store.ErrReadOnly}
	}
	return nil
}

func (s *session) doOpen(req *proto.Request) error {
	mode, opts := req.U16(0), req.U16(2)
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	ctx := s.ctx
	of := &openFile{path: path}
	writing := opts&(proto.OpenNew|proto.OpenDelete|proto.OpenUpdate|proto.OpenAppend|proto.OpenWriteOnly) != 0
	if writing {
		if err := s.refuseIfReadOnly("open", path); err != nil {
			return err
		}
		co := store.CreateOptions{
			Perm:      fs.FileMode(mode) & fs.ModePerm,
			MkParents: opts&proto.OpenMkpath != 0,
		}
		switch {
		case opts&proto.OpenDelete != 0:
			co.Truncate = true
		case opts&proto.OpenNew != 0:
			co.Exclusive = true
		default: // update or append: the file must exist
			co.Update = true
		}
		w, err := s.srv.store.Create(ctx, path, co)
		if err != nil {
			return err
		}
		of.f, of.w = w, w
	} else {
		f, err := s.srv.store.Open(ctx, path)
		if err != nil {
			return err
		}
		of.f = f
	}
	h, err := s.files.add(of)
	if err != nil {
		of.f.Close()
		return err
	}
	if opts&proto.OpenRetstat == 0 {
		return s.sendOK(req.Stream, h[:])
	}
	fi, err := of.f.Stat()
	if err != nil {
		s.files.remove(h)
		of.f.Close()
		return err
	}
	body := make([]byte, 12, 12+64)
	copy(body, h[:]) // then cpsize and cptype, zero: no compression
	body = append(body, statString(fi)...)
	body = append(body, 0)
	return s.sendOK(req.Stream, body)
}

func (s *session) doClose(req *proto.Request) error {
	of, err := s.files.remove(req.Handle(0))
	if err != nil {
		return err
	}
	if err := of.f.Close(); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

func (s *session) doSync(req *proto.Request) error {
	of, err := s.files.get(req.Handle(0))
	if err != nil {
		return err
	}
	if of.w != nil {
		if err := of.w.Sync(); err != nil {
			return err
		}
	}
	return s.sendOK(req.Stream, nil)
}

// doTruncate truncates by handle, or by path when a path is given.
func (s *session) doTruncate(req *proto.Request) error {
	size := req.I64(4)
	if size < 0 {
		return errorf(proto.ErrArgInvalid, "truncate to negative size %d", size)
	}
	if len(req.Data) == 0 {
		of, err := s.files.get(req.Handle(0))
		if err != nil {
			return err
		}
		if of.w == nil {
			return errorf(proto.ErrFileNotOpen, "file is not open for writing")
		}
		if err := of.w.Truncate(size); err != nil {
			return err
		}
		return s.sendOK(req.Stream, nil)
	}
	path, _, err := pathArg(req.Data)
	if err != nil {
		return err
	}
	if err := s.refuseIfReadOnly("truncate", path); err != nil {
		return err
	}
	w, err := s.srv.store.Create(s.ctx, path, store.CreateOptions{Update: true})
	if err != nil {
		return err
	}
	err = w.Truncate(size)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// handleFromQuery reads the 4-byte handle used by by-handle stat and query.
func handleAt(req *proto.Request, off int) ([4]byte, bool) {
	h := req.Handle(off)
	return h, binary.BigEndian.Uint32(h[:]) != 0
}
