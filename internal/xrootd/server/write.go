package server

import (
	"encoding/binary"

	"sitebox/internal/cksum"
	"sitebox/internal/xrootd/proto"
)

func (s *session) writableFile(req *proto.Request) (*openFile, error) {
	of, err := s.files.get(req.Handle(0))
	if err != nil {
		return nil, err
	}
	if of.w == nil {
		return nil, errorf(proto.ErrFileNotOpen, "%s is open for reading only", of.path)
	}
	return of, nil
}

func (s *session) doWrite(req *proto.Request) error {
	of, err := s.writableFile(req)
	if err != nil {
		return err
	}
	off := req.I64(4)
	if off < 0 {
		return errorf(proto.ErrArgInvalid, "negative write offset %d", off)
	}
	if _, err := of.w.WriteAt(req.Data, off); err != nil {
		return err
	}
	return s.sendOK(req.Stream, nil)
}

// doPgwrite verifies the CRC32C in front of every page piece before any
// byte is written: a request with a damaged page writes nothing and fails
// with kXR_ChkSumErr, so the client resends it.
func (s *session) doPgwrite(req *proto.Request) error {
	of, err := s.writableFile(req)
	if err != nil {
		return err
	}
	off := req.I64(4)
	if off < 0 {
		return errorf(proto.ErrArgInvalid, "negative write offset %d", off)
	}
	type piece struct {
		off  int64
		data []byte
	}
	var pieces []piece
	d, cur := req.Data, off
	for len(d) > 0 {
		if len(d) <= 4 {
			return errorf(proto.ErrArgInvalid, "pgwrite payload ends inside a page checksum")
		}
		crc := binary.BigEndian.Uint32(d[:4])
		n := min(len(d)-4, proto.PgPageSize-int(cur%proto.PgPageSize))
		data := d[4 : 4+n]
		if cksum.CRC32COf(data) != crc {
			return errorf(proto.ErrChkSumErr, "pgwrite: checksum mismatch in page at offset %d", cur)
		}
		pieces = append(pieces, piece{cur, data})
		cur += int64(n)
		d = d[4+n:]
	}
	for _, p := range pieces {
		if _, err := of.w.WriteAt(p.data, p.off); err != nil {
			return err
		}
	}
	return s.sendStatus(req, off, nil, true)
}
