package server

import (
	"encoding/binary"
	"errors"
	"io"

	"sitebox/internal/cksum"
	"sitebox/internal/xrootd/proto"
)

// doReadv serves a vector read: every element is validated before any
// byte is sent, then elements go out as [handle, length, offset] headers
// followed by data, packed into frames no bigger than the read chunk and
// split only at element boundaries (kXR_oksofar for all but the last).
func (s *session) doReadv(req *proto.Request) error {
	list, err := proto.ParseReadList(req.Data)
	if err != nil {
		return errorf(proto.ErrArgInvalid, "%v", err)
	}
	if len(list) == 0 {
		return errorf(proto.ErrArgMissing, "readv with no elements")
	}
	files := make([]*openFile, len(list))
	for i, e := range list {
		if e.Len < 0 || e.Len > proto.ReadvMaxElemLen {
			return errorf(proto.ErrArgTooLong, "readv element %d: length %d outside 0..%d", i, e.Len, proto.ReadvMaxElemLen)
		}
		if e.Offset < 0 {
			return errorf(proto.ErrArgInvalid, "readv element %d: negative offset", i)
		}
		if files[i], err = s.files.get(e.Handle); err != nil {
			return err
		}
	}
	bp := s.srv.getBuf()
	defer s.srv.putBuf(bp)
	buf := *bp
	if len(buf) < proto.ReadvMaxElemLen+proto.ReadvElemLen {
		buf = make([]byte, proto.ReadvMaxElemLen+proto.ReadvElemLen)
	}
	used := 0
	for i, e := range list {
		need := proto.ReadvElemLen + int(e.Len)
		if used+need > len(buf) {
			if err := s.sendFrame(req.Stream, proto.StatusOKSoFar, buf[:used]); err != nil {
				return nil
			}
			used = 0
		}
		data := buf[used+proto.ReadvElemLen : used+need]
		n, err := files[i].f.ReadAt(data, e.Offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		e.Len = int32(n) // past the end: the element comes back short
		proto.PutReadListElem(buf[used:], e)
		used += proto.ReadvElemLen + n
	}
	return s.sendFrame(req.Stream, proto.StatusOK, buf[:used])
}

// pgMaxPages is how many 4 KiB pages one pgread frame carries (as XRootD).
const pgMaxPages = 1022

// doPgread answers with kXR_status frames whose data is the requested range
// cut at page boundaries, each piece preceded by its CRC32C, so the client
// can verify every page end to end.
func (s *session) doPgread(req *proto.Request) error {
	of, err := s.files.get(req.Handle(0))
	if err != nil {
		return err
	}
	off := req.I64(4)
	n, err := readRange(of, off, int32(req.U32(12)))
	if err != nil {
		return err
	}
	bp := s.srv.getBuf()
	defer s.srv.putBuf(bp)
	raw := (*bp)[:min(len(*bp), pgMaxPages*proto.PgPageSize)]
	out := make([]byte, 0, len(raw)+4*(len(raw)/proto.PgPageSize+2))
	for {
		// Each frame ends on a page boundary so the next starts aligned.
		chunk := min(n, int64(len(raw))-off%proto.PgPageSize)
		got, err := of.f.ReadAt(raw[:chunk], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		out = out[:0]
		for p := 0; p < got; {
			piece := min(got-p, proto.PgPageSize-int((off+int64(p))%proto.PgPageSize))
			out = binary.BigEndian.AppendUint32(out, cksum.CRC32COf(raw[p:p+piece]))
			out = append(out, raw[p:p+piece]...)
			p += piece
		}
		n -= int64(got)
		final := n == 0 || int64(got) < chunk
		if err := s.sendStatus(req, off, out, final); err != nil {
			return nil
		}
		off += int64(got)
		if final {
			return nil
		}
	}
}

// sendStatus writes one kXR_status frame with an 8-byte offset as its info
// and data after it. The header's dlen covers only the status body and info;
// the data length travels inside the body.
func (s *session) sendStatus(req *proto.Request, off int64, data []byte, final bool) error {
	var b [proto.ResponseHeaderLen + proto.StatusBodyLen + 8]byte
	proto.PutResponseHeader(b[:], proto.ResponseHeader{Stream: req.Stream, Status: proto.StatusStatus, Dlen: proto.StatusBodyLen + 8})
	body := b[proto.ResponseHeaderLen:]
	copy(body[4:6], req.Stream[:])
	body[6] = byte(req.ID - proto.ReqAuth)
	body[7] = proto.RespPartial
	if final {
		body[7] = proto.RespFinal
	}
	binary.BigEndian.PutUint32(body[12:16], uint32(len(data)))
	binary.BigEndian.PutUint64(body[16:24], uint64(off))
	binary.BigEndian.PutUint32(body[0:4], cksum.CRC32COf(body[4:24]))
	return s.write(b[:], data)
}
