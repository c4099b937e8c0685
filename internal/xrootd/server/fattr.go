package server

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// fattrIsNew (kXR_fattr options) makes a set fail for an attribute that
// exists; fattrAData makes a list return the values too.
const (
	fattrIsNew = 0x01
	fattrAData = 0x10
)

// doFattr serves kXR_fattr (`xrdfs xattr`, `xrdcp --xattr`) as xrootd
// 5.5 does: on a path, or on an open file when the payload starts with a
// NUL (an upload sets the attributes of the file it writes; changes
// through a file opened for reading are refused). The payload is the
// name vector (each name behind two zero bytes, NUL-terminated) and, for
// a set, the value vector (a 4-byte length and the value, per name). The
// answer repeats the name vector with each name's status code in place
// of its two zero bytes, after the count of errors and of names; a get
// adds the values. Attributes are the store's (store.Attributer).
func (s *session) doFattr(req *proto.Request) error {
	q := store.AttrQuery{Op: store.AttrOp(req.Body[4]), Exclusive: req.Body[6]&fattrIsNew != 0}
	num := int(req.Body[5])
	if q.Op > store.AttrSet {
		return errorf(proto.ErrArgInvalid, "fattr subcode is invalid")
	}
	if q.Op != store.AttrList && len(req.Data) == 0 {
		return errorf(proto.ErrArgMissing, "Required arguments for fattr request not present")
	}
	if q.Op == store.AttrList && num != 0 || q.Op != store.AttrList && (num == 0 || num > store.MaxAttrsPerRequest) {
		return errorf(proto.ErrArgInvalid, "fattr numattr is invalid")
	}
	if len(req.Data) == 0 || req.Data[0] == 0 {
		return s.fattrFile(req, q, num)
	}
	end := bytes.IndexByte(req.Data, 0)
	if end < 0 {
		end = len(req.Data)
	}
	name, cgi, err := argPath(req.Data[:end])
	if err != nil {
		return err
	}
	path := name.Path
	if q.Op.Changes() && s.srv.cfg.ReadOnly {
		return errReadOnly(q.Op.String(), path)
	}
	nvec, err := decodeAttrs(&q, num, req.Data[min(end+1, len(req.Data)):])
	if err != nil {
		return err
	}
	ctx := s.reqCtx(cgi)
	if err := name.Check(ctx, s.srv.store, q.Op.String(), store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: q.Op.String(), Path: path}); done || err != nil {
		return err
	}
	attrs, err := store.Attrs(ctx, s.srv.store, path, q)
	if err != nil {
		return err
	}
	return s.sendAttrs(req, q, nvec, attrs)
}

// fattrFile serves kXR_fattr on the open file the handle names.
func (s *session) fattrFile(req *proto.Request, q store.AttrQuery, num int) error {
	of, err := s.files.acquire(req.Handle(0))
	if err != nil {
		return errorf(proto.ErrFileNotOpen, "fattr does not refer to an open file")
	}
	defer of.release()
	if q.Op.Changes() && of.w == nil {
		return errorf(proto.ErrInvalidRequest, "fattr request modifies a file open for reading")
	}
	if q.Op.Changes() && s.srv.cfg.ReadOnly {
		return errReadOnly(q.Op.String(), of.path)
	}
	args := req.Data
	if len(args) > 0 {
		args = args[1:]
	}
	nvec, err := decodeAttrs(&q, num, args)
	if err != nil {
		return err
	}
	var attrs []store.Attr
	if _, ok := of.f.(store.AttrFile); ok || q.Op.Changes() || of.req == nil {
		attrs, err = store.FileAttrs(of.f, of.path, q)
	} else {
		// A file that keeps no attributes itself (a cache's) answers
		// reads with its path's, asked as the open was (xrdcp --xattr
		// lists the attributes of the file it downloads).
		attrs, err = store.Attrs(store.WithRequest(s.ctx, of.req), s.srv.store, of.path, q)
	}
	if err != nil {
		return err
	}
	return s.sendAttrs(req, q, nvec, attrs)
}

// decodeAttrs reads num names (and, for a set, their values) from b into
// q, with xrootd's codes for a malformed vector; it returns the name
// vector, which the answer repeats.
func decodeAttrs(q *store.AttrQuery, num int, b []byte) ([]byte, error) {
	if q.Op == store.AttrList {
		return nil, nil
	}
	p := 0
	for i := range num {
		if p+2 >= len(b) {
			return nil, errorf(proto.ErrArgMissing, "missing name of fattr argument #%d", i+1)
		}
		if b[p] != 0 || b[p+1] != 0 {
			return nil, errorf(proto.ErrArgInvalid, "fattr name argument #%d does not start with two zero bytes", i+1)
		}
		n := bytes.IndexByte(b[p+2:], 0)
		if n < 0 {
			n = len(b) - p - 2
		}
		switch {
		case n == 0:
			return nil, errorf(proto.ErrArgMissing, "empty name in fattr argument #%d", i+1)
		case n > store.MaxAttrNameLen:
			return nil, errorf(proto.ErrArgTooLong, "fattr name argument #%d has %d bytes (at most %d)", i+1, n, store.MaxAttrNameLen)
		}
		q.Attrs = append(q.Attrs, store.Attr{Name: string(b[p+2 : p+2+n])})
		p += 2 + n + 1
	}
	nvec := b[:min(p, len(b))]
	if q.Op != store.AttrSet {
		if p != len(b) {
			return nil, errorf(proto.ErrBadPayload, "fattr request has %d bytes after its names", len(b)-p)
		}
		return nvec, nil
	}
	for i := range q.Attrs {
		if p+4 > len(b) {
			return nil, errorf(proto.ErrArgInvalid, "missing length of fattr value #%d", i+1)
		}
		vlen := int32(binary.BigEndian.Uint32(b[p:]))
		p += 4
		if vlen < 0 || vlen > store.MaxAttrValueLen {
			return nil, errorf(proto.ErrArgTooLong, "fattr value #%d has %d bytes (at most %d)", i+1, vlen, store.MaxAttrValueLen)
		}
		if p+int(vlen) > len(b) {
			return nil, errorf(proto.ErrArgInvalid, "fattr value #%d is cut short", i+1)
		}
		q.Attrs[i].Value = b[p : p+int(vlen)]
		p += int(vlen)
	}
	if p != len(b) {
		return nil, errorf(proto.ErrBadPayload, "fattr request has %d bytes after its values", len(b)-p)
	}
	return nvec, nil
}

// sendAttrs answers a fattr request with the outcome of each attribute.
func (s *session) sendAttrs(req *proto.Request, q store.AttrQuery, nvec []byte, attrs []store.Attr) error {
	var out []byte
	if q.Op == store.AttrList {
		withData := req.Body[6]&fattrAData != 0
		for _, a := range attrs {
			if a.Err != nil {
				continue
			}
			out = append(append(out, a.Name...), 0)
			if withData {
				out = binary.BigEndian.AppendUint32(out, uint32(len(a.Value)))
				out = append(out, a.Value...)
			}
		}
		return s.sendOK(req.Stream, out)
	}
	if len(attrs) != len(q.Attrs) {
		return errorf(proto.ErrServerError, "%s: the store answered %d attributes of %d", q.Op, len(attrs), len(q.Attrs))
	}
	nerrs := 0
	out = append(out, 0, byte(len(attrs)))
	out = append(out, nvec...)
	p := 2
	for _, a := range attrs {
		if a.Err != nil {
			nerrs++
			code, _ := toXrd(a.Err)
			binary.BigEndian.PutUint16(out[p:], uint16(code))
		}
		p += 2 + len(a.Name) + 1
	}
	out[0] = byte(nerrs)
	if q.Op == store.AttrGet {
		for _, a := range attrs {
			if a.Err != nil {
				a.Value = nil
			}
			out = binary.BigEndian.AppendUint32(out, uint32(len(a.Value)))
			out = append(out, a.Value...)
		}
	}
	return s.sendOK(req.Stream, out)
}

// queryXattr answers query xattr (kXR_Qxattr) in xrootd's oss format:
// the space, the type ('f', 'd' or 'o' for other), size and times of the
// path, whether it may be written, and the client's privileges ("a" for
// all on a writable export, "lr" — lookup, read — on a read-only one).
// The store keeps one time per file, so oss.ct and oss.at repeat oss.mt.
func (s *session) queryXattr(req *proto.Request) error {
	name, cgi, err := argPath(req.Data)
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
	kind := byte('o')
	switch {
	case fi.Mode.IsRegular():
		kind = 'f'
	case fi.IsDir():
		kind = 'd'
	}
	fsMode, privs := byte('r'), "lr"
	if fi.Writable && !s.srv.cfg.ReadOnly {
		fsMode, privs = 'w', "a"
	}
	t := fi.ModTime.Unix()
	return s.sendString(req.Stream, fmt.Sprintf("oss.cgroup=public&oss.type=%c&oss.used=%d&oss.mt=%d&oss.ct=%d&oss.at=%d&oss.u=*&oss.g=*&oss.fs=%c&ofs.ap=%s",
		kind, fi.Size, t, t, t, fsMode, privs))
}
