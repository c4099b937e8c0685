package server

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/store"
	"sitebox/internal/xrootd/proto"
)

// maxBadPages bounds the pgwrite pages with a bad CRC a file may have
// awaiting retransmission (XRootD's kXR_pgMaxEos).
const maxBadPages = 256

// openFile is one entry of a session's file table. Requests using it hold
// a reference, so close waits for in-flight reads and writes rather than
// pulling the descriptor from under a sendfile.
type openFile struct {
	path string
	f    store.File
	w    store.WritableFile // nil when opened for reading
	fd   int                // descriptor for sendfile, or -1
	// needCRC is set for files of an integrity-protected namespace: on a
	// plain connection their data moves only with per-page CRC32C
	// (pgread, pgwrite).
	needCRC bool
	// req is who opened it (protocol, identity), for transfer metrics.
	req  *store.Request
	refs sync.WaitGroup
	// posc is set for a file opened with kXR_posc: it is written under a
	// temporary name until a successful close (posc.go).
	posc *posc
	// tpc is set for the destination of a root:// third-party copy (tpc.go).
	tpc *tpcDest
	// unlock gives back the writer lock of a file opened for writing
	// (writers.go).
	unlock func()
	// withdraw ends the third-party copy grant the open made, if any
	// (tpcgrants.go).
	withdraw func()

	mu  sync.Mutex
	bad map[int64]int // pgwrite pages awaiting a good copy: offset → length

	// opened and bytes are for the access log: when the transfer began
	// and the bytes it moved.
	opened time.Time
	bytes  atomic.Int64
}

func newOpenFile(path string, f store.File, w store.WritableFile, req *store.Request) *openFile {
	of := &openFile{path: path, f: f, w: w, fd: -1, req: req, opened: time.Now()}
	if sf, ok := f.(store.SendFiler); ok {
		of.fd = int(sf.Fd())
	}
	if rc, ok := f.(store.ChecksumRequirer); ok {
		of.needCRC = rc.RequiresChecksums()
	}
	return of
}

// moved reports n bytes of of sent (or received, upload) to the
// transfer observer.
func (s *session) moved(of *openFile, upload bool, n int) {
	of.bytes.Add(int64(n))
	if obs := s.srv.cfg.Observer; obs != nil && n > 0 {
		obs.Transferred(of.req, of.path, upload, int64(n))
	}
}

// plainRefused says why a plain read or write of of is not allowed on
// this connection, or returns nil.
func (s *session) plainRefused(op string, of *openFile) error {
	if !of.needCRC || s.tls {
		return nil
	}
	return errorf(proto.ErrNotAuthorized, "%s of %s refused: its namespace requires integrity protection; read with pgread or write with pgwrite (xrdcp's default), or connect with roots://", op, of.path)
}

// release gives back the reference acquire took.
func (f *openFile) release() { f.refs.Done() }

// fileTable maps the 4-byte handles a session hands out to open files.
type fileTable struct {
	max     int // Limits.OpenFilesPerSession; negative: no limit
	mu      sync.Mutex
	next    uint32
	files   map[uint32]*openFile
	writers int // files open for writing
}

// count returns how many files are open.
func (t *fileTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.files)
}

// summary returns how many files are open and whether all of them are
// open for reading only.
func (t *fileTable) summary() (n int, readOnly bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.files), t.writers == 0
}

func (t *fileTable) add(f *openFile) ([4]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.files == nil {
		t.files = map[uint32]*openFile{}
	}
	if exceeds(len(t.files), t.max) {
		return [4]byte{}, &limitError{whatFiles, inSession, t.max}
	}
	for t.files[t.next] != nil {
		t.next++
	}
	k := t.next
	t.next++
	t.files[k] = f
	if f.w != nil {
		t.writers++
	}
	var h [4]byte
	binary.BigEndian.PutUint32(h[:], k)
	return h, nil
}

// acquire returns the open file for h with a reference the caller must
// release.
func (t *fileTable) acquire(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.files[binary.BigEndian.Uint32(h[:])]
	if f == nil {
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x does not refer to an open file", h)
	}
	f.refs.Add(1)
	return f, nil
}

// remove takes h out of the table and waits until no request uses the file;
// the caller then closes it.
func (t *fileTable) remove(h [4]byte) (*openFile, error) {
	t.mu.Lock()
	k := binary.BigEndian.Uint32(h[:])
	f := t.files[k]
	if f == nil {
		t.mu.Unlock()
		return nil, errorf(proto.ErrFileNotOpen, "file handle %x does not refer to an open file", h)
	}
	delete(t.files, k)
	if f.w != nil {
		t.writers--
	}
	t.mu.Unlock()
	f.refs.Wait()
	return f, nil
}

// closeAll closes every file when the session ends (no request runs then)
// and returns how many there were. Files opened with kXR_posc were not
// closed successfully, so they are removed.
func (t *fileTable) closeAll(log *slog.Logger, closed func(*openFile, error)) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.files)
	for k, f := range t.files {
		if f.tpc != nil {
			f.tpc.abandon(context.Background())
		} else if f.posc != nil {
			f.posc.abort(log, f.f, "the client left without closing it")
		} else if err := f.f.Close(); err != nil {
			log.Warn("close at disconnect", "path", f.path, "err", err)
		}
		f.unlockWriter()
		f.dropGrant()
		closed(f, errLeftOpen)
		delete(t.files, k)
	}
	t.writers = 0
	return n
}

// errLeftOpen is the access log's result for a file the client never
// closed (it left, or the server stopped).
var errLeftOpen = errors.New("connection ended before close")

// logTransfer writes of's line to the access log, if there is one.
func (s *session) logTransfer(of *openFile, err error) {
	sink := s.srv.cfg.AccessLog
	if sink == nil {
		return
	}
	op := "read"
	if of.w != nil {
		op = "write"
	}
	e := accesslog.Entry{Time: time.Now(), Proto: "root", Op: op, Path: of.path, Bytes: of.bytes.Load(),
		Duration: time.Since(of.opened), Result: accesslog.Result(err)}
	e.FromRequest(of.req)
	if e.Client == "" {
		e.Client = s.clientIP
	}
	sink.Transfer(e)
}
