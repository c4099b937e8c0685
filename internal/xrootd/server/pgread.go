package server

import (
	"encoding/binary"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// doPgread answers kXR_pgread: the data in kXR_status frames, each page's
// CRC32C in front of the page. The first page runs from the offset to the
// next 4 KiB boundary, so an unaligned read starts with a short page.
// Every frame carries the file offset of its first byte; all but the last
// are partial results. Frames end on page boundaries, so each starts with
// a page the client can check on its own, as XrdCl expects.
func (s *session) doPgread(req *proto.Request) error {
	of, off, rlen, err := s.readArgs(req)
	if err != nil {
		return err
	}
	defer of.release()
	if rlen == 0 {
		return errorf(proto.ErrArgInvalid, "pgread length 0 is invalid")
	}
	buf, err := s.getBuf()
	if err != nil {
		return err
	}
	defer buf.release()
	src := s.pgSourceOf(of, buf.b)
	pages := len(buf.b)/proto.PgPageSize + 1
	crcs := make([]byte, 4*pages)
	parts := make([][]byte, 0, 1+2*pages)
	var prefix [proto.StatusPrefixLen + 8]byte
	for {
		want := min(rlen, int64(len(buf.b)-int(off%proto.PgPageSize)))
		fr, err := src.frame(off, want)
		if err != nil {
			return err
		}
		n := len(fr.data)
		// Lent bytes may stop short of want where the lender's buffer
		// ends; only the file's end ends the answer.
		final := fr.eof || int64(n) == rlen
		parts = pgreadPages(parts[:1], crcs, fr.data, off, fr.sums)
		var info [8]byte
		binary.BigEndian.PutUint64(info[:], uint64(off))
		rt := proto.RespPartial
		if final {
			rt = proto.RespFinal
		}
		dataLen := n + 4*(len(parts)-1)/2
		parts[0] = proto.PutStatus(prefix[:], req.Stream, proto.ReqPgread, rt, info[:], dataLen)
		err = s.write(parts...)
		fr.loan.Release()
		if err != nil {
			return err
		}
		s.moved(of, false, n)
		if final {
			return nil
		}
		off += int64(n)
		rlen -= int64(n)
	}
}

// pgSource is where a pgread's frames come from: what the file lends
// (its own buffers, or its pages in the page cache), else a read into
// buf, with the CRCs the file knows.
type pgSource struct {
	f      store.File
	lender store.Lender
	mapped bool // mapped pages may be lent: not a TLS connection
	buf    []byte
	sums   []uint32 // CRCs from the file, room for a frame's pages
}

func (s *session) pgSourceOf(of *openFile, buf []byte) *pgSource {
	return &pgSource{
		f:      of.f,
		lender: store.LenderOf(of.f),
		// Mapped pages may only reach the kernel (see sendReadv).
		mapped: s.plain != nil && s.tlsw == nil,
		buf:    buf,
		sums:   make([]uint32, len(buf)/proto.PgPageSize+1),
	}
}

// frame gets up to want bytes at off, lent where the file can, with
// their CRCs where the file knows them (off on a page boundary).
func (src *pgSource) frame(off, want int64) (dataFrame, error) {
	// Mapped pages only with their CRCs: without, pgreadPages computes
	// them, reading the bytes, which mapped pages may not be.
	var opts store.LendOptions
	if off%proto.PgPageSize == 0 {
		opts = store.LendOptions{CRCs: src.sums, Mapped: src.mapped}
	}
	return lendFrame(src.lender, src.f, off, src.buf[:want], opts)
}

// pgreadPages appends the pages of data, which starts at file offset off,
// to parts as a pgread frame carries them: each page's CRC32C (from sums
// when given, else computed), written into crcs, then the page.
func pgreadPages(parts [][]byte, crcs, data []byte, off int64, sums []uint32) [][]byte {
	for i := 0; len(data) > 0; i++ {
		pl := min(proto.PgPageSize-int(off%proto.PgPageSize), len(data))
		c := crcs[4*i : 4*i+4]
		if sums != nil {
			binary.BigEndian.PutUint32(c, sums[i])
		} else {
			binary.BigEndian.PutUint32(c, proto.CRC32C(data[:pl]))
		}
		parts = append(parts, c, data[:pl])
		data = data[pl:]
		off += int64(pl)
	}
	return parts
}
