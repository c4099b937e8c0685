package server

import (
	"encoding/binary"
	"fmt"
	"io"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// serveWrite serves kXR_write and kXR_pgwrite on the reader goroutine,
// streaming the payload from the socket to the file through one pooled
// buffer, so an 8 MiB write costs no 8 MiB allocation. A refused write
// still has its payload read and dropped, keeping the stream in step. The
// returned error means the connection itself failed.
func (s *session) serveWrite(req *proto.Request, dlen int) error {
	of, refuse := s.writeTarget(req, dlen)
	if refuse != nil {
		if _, err := io.CopyN(io.Discard, s.br, int64(dlen)); err != nil {
			return err
		}
		s.replyErr(req, refuse)
		return nil
	}
	defer of.release()
	if dlen > 0 {
		// Take no buffer before the payload starts to arrive: a client that
		// sends a header and goes silent holds nothing but its session
		// until the request timeout ends it.
		if _, err := s.br.Peek(1); err != nil {
			return err
		}
	}
	b, err := s.getBuf()
	if err != nil {
		return err
	}
	defer b.release()
	buf := b.b
	if req.ID == proto.ReqPgwrite {
		return s.pgwrite(req, of, buf, dlen)
	}
	off := req.I64(4)
	var werr error
	for dlen > 0 {
		n := min(dlen, len(buf))
		if _, err := io.ReadFull(s.br, buf[:n]); err != nil {
			return err
		}
		if werr == nil {
			_, werr = of.w.WriteAt(buf[:n], off)
			if werr == nil {
				s.moved(of, true, n)
			}
		}
		off += int64(n)
		dlen -= n
	}
	if werr != nil {
		s.replyErr(req, of.writeFailed(werr))
		return nil
	}
	s.sendOK(req.Stream, nil)
	return nil
}

// writeTarget checks a write request before its payload is read and
// returns the file with a reference held, or why the write is refused.
func (s *session) writeTarget(req *proto.Request, dlen int) (*openFile, error) {
	if !s.loggedIn {
		return nil, errorf(proto.ErrNotAuthorized, "log in before %s", req.Name())
	}
	off := req.I64(4)
	if off < 0 {
		return nil, errorf(proto.ErrArgInvalid, "%s offset %d is negative", req.Name(), off)
	}
	if req.ID == proto.ReqPgwrite {
		if _, err := proto.PgwriteDataLen(off, dlen); err != nil {
			return nil, errorf(proto.ErrArgInvalid, "%v", err)
		}
	}
	of, err := s.files.acquire(req.Handle(0))
	if err != nil {
		return nil, err
	}
	if of.w == nil {
		of.release()
		// XRootD answers EBADF's code, kXR_FileNotOpen.
		return nil, errorf(proto.ErrFileNotOpen, "%s: file handle %x (%s) is open for reading only", req.Name(), req.Handle(0), of.path)
	}
	if req.ID == proto.ReqWrite {
		if err := s.plainRefused("write", of); err != nil {
			of.release()
			return nil, err
		}
	}
	return of, nil
}

// pgwrite writes the pages of a kXR_pgwrite payload whose CRC32C matches
// and answers with the offsets of those that do not, for the client to send
// again (with kXR_pgRetry). Bad pages are never written; they are
// remembered until a good copy arrives, and close reports any left.
func (s *session) pgwrite(req *proto.Request, of *openFile, buf []byte, dlen int) error {
	start := req.I64(4)
	pos := start
	var werr error
	var bad []badPage
	for dlen > 0 {
		n, o := 0, pos // whole units that fit in buf
		for dlen-n > 0 {
			pl := min(proto.PgPageSize-int(o%proto.PgPageSize), dlen-n-4)
			if n+4+pl > len(buf) {
				break
			}
			n += 4 + pl
			o += int64(pl)
		}
		if _, err := io.ReadFull(s.br, buf[:n]); err != nil {
			return err
		}
		if werr == nil {
			var b []badPage
			b, werr = writePages(of, buf[:n], pos)
			bad = append(bad, b...)
			if werr == nil {
				// The page data (o - pos: the CRCs excluded), less the
				// pages refused for a bad CRC.
				good := int(o - pos)
				for _, p := range b {
					good -= p.n
				}
				s.moved(of, true, good)
			}
		}
		dlen -= n
		pos = o
	}
	if werr == nil {
		werr = of.noteBadPages(bad)
	}
	if werr != nil {
		s.replyErr(req, of.writeFailed(werr))
		return nil
	}
	var info [8]byte
	binary.BigEndian.PutUint64(info[:], uint64(start))
	cse := encodeCSE(bad)
	var prefix [proto.StatusPrefixLen + 8]byte
	s.write(proto.PutStatus(prefix[:], req.Stream, proto.ReqPgwrite, proto.RespFinal, info[:], len(cse)), cse)
	return nil
}

// badPage is a pgwrite page whose CRC did not match its data.
type badPage struct {
	off int64
	n   int
}

// writePages checks the units (CRC32C then page data) in buf, whose first
// data byte belongs at file offset off, packs the good pages together in
// place and writes each run of them. It returns the bad pages.
func writePages(of *openFile, buf []byte, off int64) ([]badPage, error) {
	var bad []badPage
	w, runOff := 0, off // packed good data so far, and its file offset
	flush := func() error {
		if w == 0 {
			return nil
		}
		_, err := of.w.WriteAt(buf[:w], runOff)
		w = 0
		return err
	}
	of.mu.Lock()
	hadBad := len(of.bad) > 0
	of.mu.Unlock()
	for u := 0; u < len(buf); {
		pl := min(proto.PgPageSize-int(off%proto.PgPageSize), len(buf)-u-4)
		crc := binary.BigEndian.Uint32(buf[u:])
		page := buf[u+4 : u+4+pl]
		if proto.CRC32C(page) == crc {
			copy(buf[w:], page) // w <= u: the packed data never overtakes
			w += pl
			if hadBad {
				of.mu.Lock()
				delete(of.bad, off)
				of.mu.Unlock()
			}
		} else {
			if err := flush(); err != nil {
				return nil, err
			}
			bad = append(bad, badPage{off, pl})
			runOff = off + int64(pl)
		}
		u += 4 + pl
		off += int64(pl)
	}
	return bad, flush()
}

// noteBadPages remembers pages awaiting retransmission, refusing a request
// or file with more than XRootD allows.
func (of *openFile) noteBadPages(bad []badPage) error {
	if len(bad) == 0 {
		return nil
	}
	if len(bad) >= proto.PgMaxEpr {
		return errorf(proto.ErrTooManyErrs, "pgwrite to %s: %d pages with bad checksums in one request", of.path, len(bad))
	}
	of.mu.Lock()
	defer of.mu.Unlock()
	if of.bad == nil {
		of.bad = map[int64]int{}
	}
	for _, b := range bad {
		of.bad[b.off] = b.n
	}
	if len(of.bad) > maxBadPages {
		return errorf(proto.ErrTooManyErrs, "pgwrite to %s: more than %d pages with uncorrected checksum errors", of.path, maxBadPages)
	}
	return nil
}

// encodeCSE builds ServerResponseBody_pgWrCSE: a CRC32C of what follows,
// the lengths of the first and last bad page, and their offsets.
func encodeCSE(bad []badPage) []byte {
	if len(bad) == 0 {
		return nil
	}
	b := make([]byte, 8+8*len(bad))
	binary.BigEndian.PutUint16(b[4:], uint16(bad[0].n))
	binary.BigEndian.PutUint16(b[6:], uint16(bad[len(bad)-1].n))
	for i, p := range bad {
		binary.BigEndian.PutUint64(b[8+8*i:], uint64(p.off))
	}
	binary.BigEndian.PutUint32(b[0:], proto.CRC32C(b[4:]))
	return b
}

// doSync flushes a file to stable storage; for a file open for reading
// there is nothing to flush.
func (s *session) doSync(req *proto.Request) error {
	of, err := s.files.acquire(req.Handle(0))
	if err != nil {
		return err
	}
	defer of.release()
	if of.tpc != nil {
		return s.syncTPC(req, of) // tpc.go
	}
	if of.w != nil {
		if err := of.w.Sync(); err != nil {
			return of.writeFailed(err)
		}
	}
	return s.sendOK(req.Stream, nil)
}

// doTruncate sets the size of an open file, or with a path payload, of a
// file by name.
func (s *session) doTruncate(req *proto.Request) error {
	size := req.I64(4)
	if size < 0 {
		return errorf(proto.ErrArgInvalid, "truncate to negative size %d", size)
	}
	if len(req.Data) == 0 {
		of, err := s.files.acquire(req.Handle(0))
		if err != nil {
			return err
		}
		defer of.release()
		if of.w == nil {
			// XRootD answers EINVAL's code here.
			return errorf(proto.ErrArgInvalid, "truncate: file handle %x (%s) is open for reading only", req.Handle(0), of.path)
		}
		if err := of.w.Truncate(size); err != nil {
			return of.writeFailed(err)
		}
		return s.sendOK(req.Stream, nil)
	}
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path := name.Path
	if s.srv.cfg.ReadOnly {
		return errReadOnly("truncate", path)
	}
	ctx, co := s.reqCtx(cgi), store.CreateOptions{Update: true}
	if err := name.Check(ctx, s.srv.store, "truncate", store.Inspect); err != nil {
		return err
	}
	if done, err := s.routed(ctx, req, store.Call{Op: "create", Path: path, Create: co}); done || err != nil {
		return err
	}
	w, err := store.Create(ctx, s.srv.store, path, co)
	if err != nil {
		return err
	}
	if err := w.Truncate(size); err != nil {
		w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("truncate %s: %w", path, err)
	}
	return s.sendOK(req.Stream, nil)
}
