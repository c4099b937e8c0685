// Package tpc is the copy engine behind third-party copy: a file moves
// between this box's store and another server (HTTP-TPC pull and push,
// root:// TPC pull) or within the store (WebDAV COPY). It never leaves a
// partial file under the final name: data goes to a hidden temporary next
// to the target, is checked, and is renamed into place only when complete.
package tpc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"sync/atomic"
	"time"

	"sitebox/internal/dio"
	"sitebox/internal/store"
)

// TempPrefix starts the names of the temporaries a copy writes. It is the
// prefix PUT uses, so listings hide a copy in flight the same way.
const TempPrefix = ".sitebox-upload-"

// chunk is the size of one read+write; each stream moves one chunk at a
// time into a buffer held against the box's Budget.
const chunk = 4 << 20

// chunkTimeout bounds the move of one chunk, so a source or destination
// that stalls (but keeps its connection) fails the copy instead of
// holding it forever: 4 MiB in two minutes is about 35 kB/s.
const chunkTimeout = 2 * time.Minute

// MaxStreams caps X-Number-Of-Streams: a client must not make the box
// open hundreds of connections to another server.
const MaxStreams = 16

// ChecksumAlgo is the checksum compared after a copy when both ends
// offer it; adler32 is what WLCG storage and FTS use.
const ChecksumAlgo = "adler32"

// Where is the other server of a copy and the file there, without its
// query (which may carry a token): what logs and errors name.
type Where struct {
	Raw                string // the URL as given, for the Remote that parsed it
	Scheme, Host, Path string
	// TLS: the Remote reaches the server encrypted, and follows no
	// redirect to a plain one.
	TLS bool
}

func (w Where) String() string { return w.Scheme + "://" + w.Host + w.Path }

// WithPeer returns ctx with its store.Request naming w as the other
// server of the copy, for the calls that open the copy's local end
// (LocalSource, LocalSink): the namespace policy then refuses a copy
// that would move a protected namespace's bytes unencrypted.
func WithPeer(ctx context.Context, w Where) context.Context {
	r := *store.RequestFrom(ctx)
	r.CopyPeer = &store.CopyPeer{URL: w.String(), TLS: w.TLS}
	return store.WithRequest(ctx, &r)
}

// Remote reaches the other server of a copy. The box hands one to the
// frontends (tpcremote.Dialer), so they never dial servers themselves;
// without one a frontend refuses third-party copies.
type Remote interface {
	// Parse checks the URL of the other server; its error names the
	// problem.
	Parse(raw string) (Where, error)
	// Source opens the file at w for reading, presenting token (if any);
	// opaque, if not empty, is CGI sent with the open (root:// TPC's
	// tpc.key and tpc.org).
	Source(ctx context.Context, w Where, opaque, token string) (Source, error)
	// Sink starts an upload to w, presenting token (if any), of size
	// bytes in all.
	Sink(ctx context.Context, w Where, token string, size int64) (Sink, error)
}

// Source is what a copy reads: an open file and its size.
type Source struct {
	File store.File
	Size int64
	// Checksum gives the source's checksum for verification; nil or an
	// error means the copy is not verified against the source.
	Checksum func(ctx context.Context) (string, error)
	Close    func() error
	// Window, if larger than a chunk, lets a copy that runs one stream
	// ask a source that streams ranges (store.RangeReader, with bodies
	// read as plain readers) for that many bytes at a time and take its
	// chunks from one answer (heldrange.go).
	Window int64
}

// Sink is where a copy writes: a file that is committed only on success.
type Sink struct {
	File store.WritableFile
	// Sequential is true when File accepts writes only in order (an HTTP
	// upload): the copy then uses one stream.
	Sequential bool
	// Checksum gives the written data's checksum once File is closed,
	// as the server holding it computes it (a remote upload); nil: the
	// copy sums the data as it writes it (a local file).
	Checksum func(ctx context.Context) (string, error)
	// Cancel, if set, makes a write blocked on File return (an upload to
	// a server that stopped reading); the copy then fails.
	Cancel func()
	// Commit makes the data visible under the final name (after Close).
	Commit func(ctx context.Context) error
	// Abort discards whatever was written (closing File if still open);
	// it runs without the request's context so that a client gone
	// mid-copy still leaves nothing behind.
	Abort func(ctx context.Context)
	// NameErrors, if set, makes an error of the copy speak of the name
	// the client asked for (a local sink never names its temporary).
	NameErrors func(error) error
}

// Job is one prepared copy: both ends are open, nothing moved yet.
type Job struct {
	Src     Source
	Dst     Sink
	Streams int
	// Buffers is the box's budget for copy buffers, shared by every
	// copy; a Job without one fails.
	Buffers *Budget
	Log     *slog.Logger
	moved   atomic.Int64
	sums    chunkSums    // of the chunks written, when the copy verifies them
	held    *heldRange   // the ranged read of a one-stream copy, when the source allows it
	wb      *writeBehind // starts the disk writes of written chunks (a local file)
	direct  *dio.Writer  // writes aligned pieces past the page cache (a local file)
}

// Moved is the number of bytes written so far; safe to call while Run runs.
func (j *Job) Moved() int64 { return j.moved.Load() }

// Run copies, verifies and commits. On any failure the sink is aborted,
// so nothing is left under the final name; both ends are closed in all
// cases.
func (j *Job) Run(ctx context.Context) (err error) {
	defer func() {
		if j.Src.Close != nil {
			j.Src.Close()
		}
	}()
	defer func() {
		// Abort before any clean Close of a failed copy: an upload ended
		// cleanly would look complete to the server receiving it.
		if err != nil && j.Dst.Abort != nil {
			j.Dst.Abort(context.WithoutCancel(ctx))
		}
		if err != nil && j.Dst.NameErrors != nil {
			err = j.Dst.NameErrors(err)
		}
	}()
	began := time.Now()
	src := j.askSource(ctx)
	defer src.stop()
	if src != nil && j.Dst.Checksum == nil {
		j.sums = newChunkSums(j.Src.Size)
	}
	j.wb = startWriteBehind(j.Dst.File)
	j.direct = store.DirectWriter(j.Dst.File)
	err = j.copy(ctx)
	j.direct.Close()
	j.wb.stop(err == nil)
	if err != nil {
		return err
	}
	moved := time.Now()
	if err = j.Dst.File.Close(); err != nil {
		return fmt.Errorf("closing destination: %w", err)
	}
	if err = j.verify(ctx, src); err != nil {
		return err
	}
	verified := time.Now()
	if j.Dst.Commit != nil {
		err = j.Dst.Commit(ctx)
	}
	j.logger().Debug("copy landed", "moving_seconds", moved.Sub(began).Seconds(), "direct_bytes", j.direct.Bytes(),
		"verify_seconds", verified.Sub(moved).Seconds(), "landing_seconds", time.Since(verified).Seconds())
	return err
}

// moveChunk copies [off, off+chunk) of the source, short at the end,
// within chunkTimeout, or less when the budget cuts it off (cutStale).
func (j *Job) moveChunk(ctx context.Context, buf []byte, off int64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, stop := context.WithTimeout(ctx, chunkTimeout)
	defer stop()
	defer j.Buffers.track(cancel)()
	if j.Dst.Cancel != nil {
		// A write blocked on a destination that stopped taking data
		// returns when the sink is cancelled.
		defer context.AfterFunc(ctx, j.Dst.Cancel)()
	}
	err := j.readWrite(ctx, buf, off)
	if err == nil {
		j.wb.wrote(off, min(int64(len(buf)), j.Src.Size-off))
	}
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrTooSlow) {
		return fmt.Errorf("%w (at %d)", cause, off)
	}
	return err
}

func (j *Job) readWrite(ctx context.Context, buf []byte, off int64) error {
	want := int(min(int64(len(buf)), j.Src.Size-off))
	if rr, ok := store.As[store.RangeReader](j.Src.File); ok {
		return j.streamChunk(ctx, rr, buf[:want], off)
	}
	if _, local := store.As[store.SendFiler](j.Src.File); local {
		return j.copyPieces(ctx, buf[:want], off)
	}
	var n int
	var err error
	if cr, ok := j.Src.File.(store.ContextReaderAt); ok {
		n, err = readFullAt(func(p []byte, o int64) (int, error) { return cr.ReadAtContext(ctx, p, o) }, buf[:want], off)
	} else {
		n, err = readFullAt(j.Src.File.ReadAt, buf[:want], off)
	}
	if n < want {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("reading source at %d: %w", off+int64(n), err)
	}
	j.sums.add(off, buf[:want])
	return j.written(buf[:want], off)
}

func readFullAt(read func([]byte, int64) (int, error), p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		m, err := read(p[n:], off+int64(n))
		n += m
		if err != nil {
			if n == len(p) && errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		if m == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// verify compares the source's checksum with the data written (summed
// as it was written, or as the destination server gives it); a source
// that offers none leaves the copy verified by its size only.
func (j *Job) verify(ctx context.Context, src *sourceSum) error {
	if src == nil {
		return nil
	}
	want, err := src.wait(ctx)
	if err != nil || want == "" {
		j.logger().Debug("source offers no checksum; size-verified only", "err", err)
		return nil
	}
	var got string
	if j.Dst.Checksum != nil {
		if got, err = j.Dst.Checksum(ctx); err != nil {
			return fmt.Errorf("destination checksum: %w", err)
		}
	} else {
		got = j.sums.total(j.Src.Size)
	}
	if !sameSum(want, got) {
		return fmt.Errorf("%w: %s mismatch: source %s, destination %s", ErrChecksum, ChecksumAlgo, want, got)
	}
	return nil
}

// ErrChecksum reports a copy whose checksum differs from the source's.
var ErrChecksum = errors.New("checksum mismatch")

func (j *Job) logger() *slog.Logger {
	if j.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return j.Log
}

// TempName is a fresh hidden name in name's directory.
func TempName(name string) (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", fmt.Errorf("tpc: random name: %w", err)
	}
	return path.Join(path.Dir(name), TempPrefix+hex.EncodeToString(rnd[:])), nil
}
