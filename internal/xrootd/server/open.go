package server

import (
	"context"
	"encoding/binary"
	"io/fs"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// modeFromXrd converts XRootD's access mode bits (kXR_ur … kXR_ox, the
// same layout as POSIX rwxrwxrwx) to a file mode.
func modeFromXrd(m uint16) fs.FileMode { return fs.FileMode(m & 0o777) }

// doOpen opens a file for reading or, with kXR_new, kXR_delete or
// kXR_open_updt/kXR_open_wrto, for writing, and answers with its handle
// and, if asked (kXR_retstat), its stat line.
func (s *session) doOpen(req *proto.Request) error {
	mode := req.U16(0)
	opts := req.U16(2)
	name, cgi, err := argPath(req.Data)
	if err != nil {
		return err
	}
	path := name.Path
	// Creating or truncating always writes; update, write-only and append
	// write unless kXR_open_read says otherwise, which XRootD puts first.
	create := opts&(proto.OpenNew|proto.OpenDelete) != 0
	update := opts&(proto.OpenUpdate|proto.OpenWriteOnly|proto.OpenAppend) != 0 && opts&proto.OpenRead == 0
	write := create || update
	ctx := s.reqCtx(cgi)
	use := store.Inspect
	if create {
		use = store.CreateFile
	}
	if err := name.Check(ctx, s.srv.store, "open", use); err != nil {
		return err
	}
	var grant *pendingGrant
	if q := tpcCGI(cgi); q != nil { // third-party copy (tpc.go)
		var handled bool
		if ctx, grant, handled, err = s.openTPC(ctx, req, path, q, write); handled || err != nil {
			return err
		}
	}
	if write && s.srv.cfg.ReadOnly {
		return errReadOnly("open for writing", path)
	}
	release, err := s.reserveFile()
	if err != nil {
		return err
	}
	call := store.Call{Op: "open", Path: path}
	if write {
		call = store.Call{Op: "create", Path: path, Create: createOptions(mode, opts)}
	}
	if done, err := s.routed(ctx, req, call); done || err != nil {
		release()
		return err
	}
	of, err := s.openInStore(ctx, path, write, call.Create, opts)
	if err != nil {
		release()
		return err
	}
	var stat string
	if opts&proto.OpenRetstat != 0 {
		fi, err := of.f.Stat()
		if err != nil {
			s.discard(of, "stat after open failed")
			release()
			return err
		}
		stat = s.statLine(fi)
	}
	if grant != nil { // only an open that succeeded grants a copy of its file
		if err := s.grantTPC(of, grant); err != nil {
			s.discard(of, "tpc grant refused")
			release()
			return err
		}
	}
	h, err := s.files.add(of)
	if err != nil {
		s.discard(of, "the file table is full")
		release()
		return err
	}
	s.log.Debug("open", "path", path, "write", write, "handle", binary.BigEndian.Uint32(h[:]))
	if opts&proto.OpenRetstat == 0 {
		return s.sendOK(req.Stream, h[:])
	}
	// fhandle, cpsize, cptype, then the stat line with its NUL.
	var head [12]byte
	copy(head[:4], h[:])
	return s.sendFrame(req.Stream, proto.StatusOK, head[:], []byte(stat), []byte{0})
}

// openInStore opens path in the store: for writing (co, opts) under the
// path's writer lock, or for reading.
func (s *session) openInStore(ctx context.Context, path string, write bool, co store.CreateOptions, opts uint16) (*openFile, error) {
	if write {
		return s.lockedWrite(ctx, path, co, opts)
	}
	f, err := s.srv.store.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return newOpenFile(path, f, nil, store.RequestFrom(ctx)), nil
}

// openWrite creates or opens path for writing. With kXR_posc a created
// or truncated file is written under a temporary name until its close
// (posc.go); an update of an existing file is done in place, as in XRootD.
func (s *session) openWrite(ctx context.Context, path string, co store.CreateOptions, opts uint16) (*openFile, error) {
	ns, canRename := store.As[store.Namespace](s.srv.store)
	if opts&proto.OpenPosc != 0 && !co.Update && canRename {
		w, p, err := s.createPosc(ctx, ns, path, co)
		if err != nil {
			return nil, err
		}
		of := newOpenFile(path, w, w, store.RequestFrom(ctx))
		of.posc = p
		return of, nil
	}
	w, err := store.Create(ctx, s.srv.store, path, co)
	if err != nil {
		return nil, err
	}
	return newOpenFile(path, w, w, store.RequestFrom(ctx)), nil
}

// openDeleteMkpath is the mask XRootD 5 tests a kXR_delete open against
// for path creation: the value of kXR_mkdir, 3008.
const openDeleteMkpath = proto.OpenAsync | proto.OpenRefresh | proto.OpenMkpath | proto.OpenAppend | proto.OpenReplica

// lockedWrite is openWrite under the path's writer lock (writers.go),
// taken before the store can truncate the file of the writer holding it.
func (s *session) lockedWrite(ctx context.Context, path string, co store.CreateOptions, opts uint16) (*openFile, error) {
	unlock, err := store.LockWriter(s.srv.store, path, s)
	if err != nil {
		return nil, err
	}
	of, err := s.openWrite(ctx, path, co, opts)
	if err != nil {
		unlock()
		return nil, err
	}
	of.unlock = unlock
	return of, nil
}

// createOptions are the store's terms for an open for writing with the
// access mode and open options of kXR_open.
func createOptions(mode, opts uint16) store.CreateOptions {
	co := store.CreateOptions{Perm: modeFromXrd(mode)}
	switch {
	case opts&proto.OpenNew != 0:
		co.Exclusive = true
		// XRootD creates missing directories for kXR_new when kXR_mkpath
		// or kXR_async is set, and clients always set kXR_async.
		co.MkParents = opts&(proto.OpenMkpath|proto.OpenAsync) != 0
	case opts&proto.OpenDelete != 0:
		co.Truncate = true
		// XRootD tests kXR_delete's options against kXR_mkdir (the request
		// code 3008, 0x0bc0) where kXR_mkpath was meant: any of mkpath,
		// async, refresh, append or replica creates the path, and xrdcp
		// always sends kXR_async, so `xrdcp f root://h//new/dir/f` works
		// without -p. Clients rely on it.
		co.MkParents = opts&openDeleteMkpath != 0
	default:
		co.Update = true
	}
	// The owner may always read and write what it creates, as xrootd
	// adds those bits: a raw client's mode 0 makes an rw------- file.
	co.Perm |= 0o600
	return co
}

// discard closes a file that never made it into the table.
func (s *session) discard(of *openFile, why string) {
	defer of.unlockWriter()
	of.dropGrant()
	if of.posc != nil {
		of.posc.abort(s.log, of.f, why)
		return
	}
	of.f.Close()
}

// doClose closes a handle once no request uses it. A file written with
// pgwrite that still has pages with bad CRCs is reported, as XRootD does
// (and, opened with kXR_posc, not kept).
func (s *session) doClose(req *proto.Request) (err error) {
	of, err := s.files.remove(req.Handle(0))
	if err != nil {
		return err
	}
	defer func() { s.logTransfer(of, err) }() // access log
	if of.tpc != nil {
		return s.closeTPC(req, of) // tpc.go
	}
	of.mu.Lock()
	bad := len(of.bad)
	of.mu.Unlock()
	var badErr error
	if bad > 0 {
		badErr = errorf(proto.ErrChkSumErr, "close %s: %d pages written with pgwrite still have checksum errors", of.path, bad)
	}
	if of.posc != nil {
		of.writeFailed(badErr)
		err = of.posc.commit(s.log, of.f)
	} else {
		err = of.f.Close()
	}
	// The place (and the file, for another writer) is free before the
	// client hears of the close, and a copy it granted can no longer start.
	of.unlockWriter()
	of.dropGrant()
	s.srv.limits.dropFile(s.clientIP)
	if err != nil {
		return err
	}
	if badErr != nil {
		return badErr
	}
	return s.sendOK(req.Stream, nil)
}
