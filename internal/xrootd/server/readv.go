package server

import (
	"math"
	"slices"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// readvFile is one distinct file a readv touches.
type readvFile struct {
	h    [4]byte
	of   *openFile
	size int64 // -1 until pastEnd stats the file
	lend store.Lender
}

// doReadv answers kXR_readv: a list of up to 1024 (handle, length, offset)
// segments. Every segment is checked before anything is sent — a readv
// cannot be answered in part — and the answer is, per segment, its 16-byte
// read_list header followed by its data, packed into frames of at most
// MaxReadChunk bytes without splitting a segment. The lane answers a
// readv with the list the reader parsed (answerReadv); doReadv parses
// its own for a caller that has none.
func (s *session) doReadv(req *proto.Request) error {
	return s.answerReadv(req, s.parseReadv(req))
}

// answerReadv answers req from its parsed segment list rv.
func (s *session) answerReadv(req *proto.Request, rv *readvList) error {
	elems, err := rv.elems, rv.err
	if err != nil {
		if len(req.Data)%proto.ReadvElemLen == 0 {
			return errorf(proto.ErrArgTooLong, "%v", err)
		}
		return errorf(proto.ErrArgInvalid, "%v", err)
	}
	if len(elems) == 0 {
		return errorf(proto.ErrArgInvalid, "readv list is empty")
	}
	var files []readvFile
	defer func() {
		for _, f := range files {
			f.of.release()
		}
	}()
	which, err := s.checkReadv(elems, &files)
	if err != nil {
		return err
	}
	return s.sendReadv(req, elems, files, which)
}

// checkReadv checks every segment of a readv and opens its files into
// *files (the caller releases them, also after an error); which[i] is
// the index of segment i's file. Whether a segment lies within its file
// is left to pastEnd: the size costs a stat, a system call made the
// usual way, which after an idle moment wakes the runtime's monitor
// thread (see package nbio) — on every vector read of a client reading
// one at a time. An answer that fits in one frame is checked only when
// a read comes up short, before anything is sent; so the client sees the
// same error either way, a segment's other faults are reported after an
// earlier segment's being past the end, as a check in order would.
func (s *session) checkReadv(elems []proto.ReadListElem, files *[]readvFile) ([]int, error) {
	maxSeg := s.srv.cfg.MaxReadChunk - proto.ReadvElemLen
	which := make([]int, len(elems))
	fail := func(i int, err error) ([]int, error) {
		if perr := s.pastEnd(elems[:i], *files, which[:i]); perr != nil {
			return nil, perr
		}
		return nil, err
	}
	for i, e := range elems {
		if e.Len < 0 || int(e.Len) > maxSeg {
			return fail(i, errorf(proto.ErrArgInvalid, "readv segment %d: length %d is outside 0..%d", i, e.Len, maxSeg))
		}
		if e.Offset < 0 {
			return fail(i, errorf(proto.ErrArgInvalid, "readv segment %d: offset %d is negative", i, e.Offset))
		}
		j := slices.IndexFunc(*files, func(f readvFile) bool { return f.h == e.Handle })
		if j < 0 {
			of, err := s.files.acquire(e.Handle)
			if err != nil {
				return fail(i, err)
			}
			*files = append(*files, readvFile{h: e.Handle, of: of, size: -1, lend: store.LenderOf(of.f)})
			j = len(*files) - 1
			if err := s.plainRefused("readv", of); err != nil {
				return fail(i, err)
			}
		}
		which[i] = j
	}
	return which, nil
}

// pastEnd reports the first segment that extends past the end of its
// file, stating each file (once) whose size is not known yet.
func (s *session) pastEnd(elems []proto.ReadListElem, files []readvFile, which []int) error {
	for i, e := range elems {
		f := &files[which[i]]
		if f.size < 0 {
			fi, err := f.of.f.Stat()
			if err != nil {
				return err
			}
			f.size = fi.Size
		}
		if e.Offset > f.size-int64(e.Len) { // not Offset+Len: it may wrap
			// kXR_FSError, as XRootD answers ESPIPE ("illegal seek").
			return errorf(proto.ErrFSError, "readv segment %d (%d bytes at %d) extends past the end of %s (%d bytes)", i, e.Len, e.Offset, f.of.path, f.size)
		}
	}
	return nil
}

// sendReadv reads the checked segments and sends them, each behind its
// read_list header, in frames of at most one buffer. Bytes a file lends
// (store.Lender: a cache's fetch buffers, its checked pages in the page
// cache) go to the writev as they are, given back once the frame is
// sent; the rest are read into the buffer.
func (s *session) sendReadv(req *proto.Request, elems []proto.ReadListElem, files []readvFile, which []int) error {
	biggest := 0
	for _, e := range elems {
		biggest = max(biggest, proto.ReadvElemLen+int(e.Len))
	}
	buf, err := s.getBufAtLeast(biggest)
	if err != nil {
		return err
	}
	defer buf.release()
	// An answer of several frames is checked whole before the first is
	// sent; one of a single frame only if a read comes up short (see
	// checkReadv).
	if readvAnswerLen(elems) > len(buf.b) {
		if err := s.pastEnd(elems, files, which); err != nil {
			return err
		}
	}
	// Bytes are counted per file once the segments are read: a counter
	// per segment cost a metrics lookup each.
	read := make([]int, len(files))
	defer func() {
		for j, n := range read {
			s.moved(files[j].of, false, n)
		}
	}()
	// Mapped pages may only reach the kernel (see store.LendOptions): not
	// a TLS connection, whose records are sealed in user space.
	opts := store.LendOptions{Mapped: s.plain != nil && s.tlsw == nil}
	fr := readvFrame{buf: buf.b, parts: make([][]byte, 1, 1+2*len(elems)), loans: make([]store.Loan, 0, min(len(elems), 16))}
	defer fr.reset()
	for i, e := range elems {
		if fr.size+proto.ReadvElemLen+int(e.Len) > len(buf.b) {
			err := s.sendFrameParts(req.Stream, proto.StatusOKSoFar, fr.parts)
			fr.reset()
			if err != nil {
				return err
			}
		}
		f := files[which[i]]
		proto.PutReadListElem(fr.buf[fr.pos:], e)
		fr.add(proto.ReadvElemLen)
		if err := fr.segment(i, f, e, opts); err != nil {
			if perr := s.pastEnd(elems, files, which); perr != nil {
				clear(read) // nothing is sent
				return perr
			}
			return err
		}
		read[which[i]] += int(e.Len)
	}
	return s.sendFrameParts(req.Stream, proto.StatusOK, fr.parts)
}

// readvAnswerLen is the length of a readv's answer: each segment's data
// behind its read_list header.
func readvAnswerLen(elems []proto.ReadListElem) int {
	n := 0
	for _, e := range elems {
		n += proto.ReadvElemLen + int(e.Len)
	}
	return n
}

// segment adds segment e of f to the frame: lent, in as many loans as
// the file makes, or read into the buffer.
func (fr *readvFrame) segment(i int, f readvFile, e proto.ReadListElem, opts store.LendOptions) error {
	if e.Offset > math.MaxInt64-int64(e.Len) { // past the end of any file
		return errorf(proto.ErrFSError, "readv segment %d: %d bytes at %d end past the largest offset", i, e.Len, e.Offset)
	}
	for off, end := e.Offset, e.Offset+int64(e.Len); off < end; {
		dst := fr.buf[fr.pos : fr.pos+int(end-off)]
		d, err := lendFrame(f.lend, f.of.f, off, dst, opts)
		if err != nil {
			return err
		}
		n := len(d.data)
		if n == 0 || d.eof && off+int64(n) < end {
			d.loan.Release()
			return errorf(proto.ErrIOError, "readv segment %d: %s ended at %d while being read", i, f.of.path, off+int64(n))
		}
		if n > 0 && &d.data[0] == &dst[0] {
			fr.add(n) // read into the buffer
		} else {
			fr.lend(d.data, d.loan)
		}
		off += int64(n)
	}
	return nil
}

// readvFrame gathers one frame of a readv's answer: runs of the buffer
// (headers, segments read into it) and lent segments, in order, behind
// parts[0], which is left for the frame's header.
type readvFrame struct {
	buf   []byte
	parts [][]byte
	loans []store.Loan // of the lent parts
	pos   int          // bytes of buf used
	size  int          // bytes in the frame
	inBuf bool         // the last part is a run of buf ending at pos
}

// add appends the next n bytes of the buffer to the frame.
func (fr *readvFrame) add(n int) {
	if fr.inBuf {
		last := &fr.parts[len(fr.parts)-1]
		*last = (*last)[:len(*last)+n]
	} else {
		fr.parts = append(fr.parts, fr.buf[fr.pos:fr.pos+n])
		fr.inBuf = true
	}
	fr.pos += n
	fr.size += n
}

// lend appends lent bytes to the frame, to be given back with reset.
func (fr *readvFrame) lend(b []byte, loan store.Loan) {
	fr.parts = append(fr.parts, b)
	fr.loans = append(fr.loans, loan)
	fr.inBuf = false
	fr.size += len(b)
}

// reset empties the frame once sent (or abandoned), giving back its
// loans.
func (fr *readvFrame) reset() {
	for _, l := range fr.loans {
		l.Release()
	}
	clear(fr.loans)
	fr.parts, fr.loans = fr.parts[:1], fr.loans[:0]
	fr.pos, fr.size, fr.inBuf = 0, 0, false
}
