package server

import (
	"encoding/binary"
	"errors"
	"io"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// pageCRCReader is a file that computes the CRC32C of each pgread page
// as it reads (a cache checks the CRCs of its pages on every read
// anyway): crcs[i] is that of the i-th page of what was read, from off
// to the next multiple of 4 KiB, then 4 KiB at a time. pgread then sends
// them instead of reading the bytes a second time.
type pageCRCReader interface {
	ReadPagesAt(p []byte, off int64, crcs []uint32) (int, error)
}

// pageViewer is a file that lends bytes (store.Viewer) together with
// their pgread CRCs, kept from when it checked them: a cache's checked
// pages still in the page cache. A pgread of them then costs the
// writev's copy alone. off must be a multiple of 4 KiB, and n too
// unless the bytes end the file; crcs[i] is set to the i-th page's.
type pageViewer interface {
	ViewPages(off int64, n int, crcs []uint32) (b []byte, ok bool)
}

// pageBorrower is a file that lends bytes it holds in its own memory (a
// cache's fetch buffers) with their pgread CRCs, for as long as the
// caller holds them: done gives them back. It may lend fewer bytes than
// asked, but only where the file goes on: end of file is learnt from a
// read. off must be a multiple of 4 KiB.
type pageBorrower interface {
	BorrowPages(off int64, n int, crcs []uint32) (b []byte, done func(), ok bool)
}

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
		// Borrowed bytes may stop short of want at the lender's buffer's
		// end; only the file's end does otherwise.
		final := int64(n) < want && fr.giveBack == nil || int64(n) == rlen
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
		if fr.giveBack != nil {
			fr.giveBack()
		}
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
// (borrowed from its memory, or lent from the page cache), else a read
// into buf, with the CRCs the file computes when it can.
type pgSource struct {
	f    store.File
	pr   pageCRCReader // nil unless the file computes CRCs as it reads
	pv   pageViewer    // nil unless the file lends mapped pages and the connection allows it
	pb   pageBorrower  // nil unless the file lends its own buffers
	buf  []byte
	sums []uint32 // CRCs from the file, room for a frame's pages
}

func (s *session) pgSourceOf(of *openFile, buf []byte) *pgSource {
	src := &pgSource{f: of.f, buf: buf}
	src.pr, _ = of.f.(pageCRCReader)
	src.pb, _ = of.f.(pageBorrower)
	// Mapped pages may only reach the kernel: not a TLS connection (see
	// sendReadv).
	if s.plain != nil && s.tlsw == nil {
		src.pv, _ = of.f.(pageViewer)
	}
	if src.pr != nil || src.pv != nil || src.pb != nil {
		src.sums = make([]uint32, len(buf)/proto.PgPageSize+1)
	}
	return src
}

// dataFrame is one frame's bytes (a read's or a pgread's): sums are their
// pgread CRCs when the file gave them (else nil: computed from the
// bytes), giveBack returns borrowed bytes after the write.
type dataFrame struct {
	data     []byte
	sums     []uint32
	giveBack func()
}

// frame gets up to want bytes at off: borrowed or lent where the file can
// (off on a page boundary), else read. Fewer than want means end of file
// unless borrowed.
func (src *pgSource) frame(off, want int64) (dataFrame, error) {
	if off%proto.PgPageSize == 0 && src.sums != nil {
		if src.pb != nil {
			if b, done, ok := src.pb.BorrowPages(off, int(want), src.sums); loaned(b, done, ok, want) {
				return dataFrame{data: b, sums: src.sums, giveBack: done}, nil
			}
		}
		if src.pv != nil {
			if b, ok := src.pv.ViewPages(off, int(want), src.sums); viewed(b, ok, want) {
				return dataFrame{data: b, sums: src.sums}, nil
			}
		}
	}
	var n int
	var err error
	if src.pr != nil {
		n, err = src.pr.ReadPagesAt(src.buf[:want], off, src.sums)
	} else {
		n, err = src.f.ReadAt(src.buf[:want], off)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return dataFrame{}, err
	}
	fr := dataFrame{data: src.buf[:n]}
	if src.pr != nil { // the read set sums too
		fr.sums = src.sums
	}
	return fr, nil
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
