package server

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"sitebox/internal/xrootd/proto"
)

// errStreamLost ends a session whose kXR_writev left the stream
// unreadable: a write_list that cannot be decoded, or that announces
// more data than a request may carry, says nothing reliable about where
// the next request starts. XRootD ends the connection then too.
var errStreamLost = errors.New("its data cannot be told from the next request")

// writevFile is one distinct file a writev writes, with a reference held.
type writevFile struct {
	h  [4]byte
	of *openFile
}

// serveWritev serves kXR_writev on the reader goroutine, as writes are:
// a write_list of up to 1024 (handle, length, offset) segments, whose
// data follows the request outside its dlen, in list order. Every
// segment is checked before a byte is written — a refused writev
// writes nothing — and a refusal whose data length is known reads the
// data and drops it, keeping the session, as for a refused write. The
// data streams through one pooled buffer; contiguous segments of a file
// go to the disk as one write, so a list of a thousand tiny segments
// costs few system calls. The returned error means the connection must
// end.
func (s *session) serveWritev(req *proto.Request, dlen int) error {
	if dlen == 0 || dlen%proto.ReadvElemLen != 0 || dlen > proto.WritevMaxElems*proto.ReadvElemLen {
		code, what := proto.ErrArgInvalid, "is not a whole number of 16-byte elements"
		if dlen > proto.WritevMaxElems*proto.ReadvElemLen {
			code, what = proto.ErrArgTooLong, fmt.Sprintf("has more than %d elements", proto.WritevMaxElems)
		}
		return s.writevStreamLost(req, code, "writev list of %d bytes %s", dlen, what)
	}
	list := make([]byte, dlen)
	if _, err := io.ReadFull(s.br, list); err != nil {
		return err
	}
	segs, err := proto.ParseWriteList(list)
	if err != nil {
		return s.writevStreamLost(req, proto.ErrArgInvalid, "%v", err)
	}
	var total int64
	for i, e := range segs {
		if e.Len < 0 {
			return s.writevStreamLost(req, proto.ErrArgInvalid, "writev segment %d: length %d is negative", i, e.Len)
		}
		total += int64(e.Len)
	}
	if total > int64(s.srv.cfg.MaxRequestData) {
		return s.writevStreamLost(req, proto.ErrArgTooLong, "writev of %d bytes exceeds the limit of %d a request may carry", total, s.srv.cfg.MaxRequestData)
	}
	var files []writevFile
	defer func() {
		for _, f := range files {
			f.of.release()
		}
	}()
	which, refuse := s.checkWritev(segs, &files)
	if refuse != nil {
		if _, err := io.CopyN(io.Discard, s.br, total); err != nil {
			return err
		}
		s.replyErr(req, refuse)
		return nil
	}
	if total == 0 {
		s.sendOK(req.Stream, nil)
		return nil
	}
	return s.writeSegments(req, segs, files, which)
}

// writevStreamLost answers a writev whose data cannot be told from the
// next request, and ends the session.
func (s *session) writevStreamLost(req *proto.Request, code int32, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	s.sendError(req.Stream, code, msg+"; closing the connection")
	return fmt.Errorf("writev refused (%s) and %w", msg, errStreamLost)
}

// checkWritev checks every segment and takes a reference on each file
// into *files (the caller releases them, also after an error); which[i]
// is the index of segment i's file. The files must be open for writing
// in this session, as for kXR_write; a segment may not be larger than a
// transfer buffer, as xrootd allows no single writev transfer larger than
// its own.
func (s *session) checkWritev(segs []proto.ReadListElem, files *[]writevFile) ([]int, error) {
	if !s.loggedIn {
		return nil, errorf(proto.ErrNotAuthorized, "log in before writev")
	}
	which := make([]int, len(segs))
	for i, e := range segs {
		if int(e.Len) > s.srv.cfg.MaxReadChunk {
			return nil, errorf(proto.ErrNoMemory, "writev segment %d: %d bytes is more than a single transfer may be (%d)", i, e.Len, s.srv.cfg.MaxReadChunk)
		}
		if e.Offset < 0 || e.Offset > math.MaxInt64-int64(e.Len) {
			return nil, errorf(proto.ErrArgInvalid, "writev segment %d: offset %d is outside a file", i, e.Offset)
		}
		j := slices.IndexFunc(*files, func(f writevFile) bool { return f.h == e.Handle })
		if j < 0 {
			of, err := s.files.acquire(e.Handle)
			if err != nil {
				return nil, errorf(proto.ErrFileNotOpen, "writev segment %d: file handle %x does not refer to an open file", i, e.Handle)
			}
			*files = append(*files, writevFile{h: e.Handle, of: of})
			j = len(*files) - 1
			if of.w == nil {
				// As for kXR_write: XRootD answers EBADF's code.
				return nil, errorf(proto.ErrFileNotOpen, "writev segment %d: file handle %x (%s) is open for reading only", i, e.Handle, of.path)
			}
			if err := s.plainRefused("writev", of); err != nil {
				return nil, err
			}
		}
		which[i] = j
	}
	return which, nil
}

// writevRun is a run of the buffer bound for one place of one file.
type writevRun struct {
	file     int
	off      int64
	from, to int // buf[from:to]
}

// writeSegments reads the checked segments' data into the buffer, as
// much as it holds at a time, and writes each run of it. After a failed
// write the rest of the data is still read, keeping the stream in step,
// and the first failure is the answer.
func (s *session) writeSegments(req *proto.Request, segs []proto.ReadListElem, files []writevFile, which []int) error {
	// Take no buffer before the data starts to arrive (see serveWrite).
	if _, err := s.br.Peek(1); err != nil {
		return err
	}
	b, err := s.getBuf()
	if err != nil {
		return err
	}
	defer b.release()
	buf := b.b
	var runs []writevRun
	pos := 0
	var werr error
	flush := func() {
		for _, r := range runs {
			if werr != nil {
				break
			}
			of := files[r.file].of
			if _, werr = of.w.WriteAt(buf[r.from:r.to], r.off); werr != nil {
				werr = of.writeFailed(werr)
				break
			}
			s.moved(of, true, r.to-r.from)
		}
		runs, pos = runs[:0], 0
	}
	for i, e := range segs {
		off, left := e.Offset, int(e.Len)
		for left > 0 {
			if pos == len(buf) {
				flush()
			}
			n := min(left, len(buf)-pos)
			if _, err := io.ReadFull(s.br, buf[pos:pos+n]); err != nil {
				return err
			}
			if k := len(runs) - 1; k >= 0 && runs[k].file == which[i] && runs[k].to == pos && runs[k].off+int64(runs[k].to-runs[k].from) == off {
				runs[k].to += n // contiguous with the run before: one write
			} else {
				runs = append(runs, writevRun{file: which[i], off: off, from: pos, to: pos + n})
			}
			pos += n
			off += int64(n)
			left -= n
		}
	}
	flush()
	if werr == nil && req.Body[0]&proto.WritevSync != 0 {
		for _, f := range files {
			if werr = f.of.w.Sync(); werr != nil {
				werr = f.of.writeFailed(werr)
				break
			}
		}
	}
	if werr != nil {
		s.replyErr(req, werr)
		return nil
	}
	s.sendOK(req.Stream, nil)
	return nil
}
