package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"

	"sitebox/internal/store"
)

// uploadPrefix starts the names of files being written under kXR_posc.
// It is the prefix the https frontend gives its uploads, so both
// frontends' listings hide both kinds of half-written file.
const uploadPrefix = ".sitebox-upload-"

// hiddenName reports whether a directory entry is a half-written upload.
func hiddenName(name string) bool { return strings.HasPrefix(name, uploadPrefix) }

// posc is a file opened with kXR_posc ("persist on successful close"), as
// XRootD's ofs honours it: the data goes to a temporary name in the target
// directory, which becomes the real name only when the client closes the
// file and every write succeeded. A cut connection, a failed write (a full
// disk) or bad pgwrite pages left at close remove it, so no partial file
// ever appears under the name the client asked for.
type posc struct {
	ns         store.Namespace
	w          store.WritableFile // as Create returned it: it may discard itself
	ctx        context.Context    // the open's request (identity) for rename and remove
	tmp, final string

	mu     sync.Mutex
	failed error // the first failed change; the close then removes the file
}

// createPosc creates the temporary file for a kXR_posc open of name.
// Exclusive (kXR_new) is checked against the real name now; the rename at
// close replaces whatever appeared there meanwhile, as a truncating open
// would have.
func (s *session) createPosc(ctx context.Context, ns store.Namespace, name string, co store.CreateOptions) (store.WritableFile, *posc, error) {
	if co.Exclusive {
		if _, err := s.srv.store.Stat(ctx, name); err == nil {
			return nil, nil, &store.PathError{Op: "open", Path: name, Err: store.ErrExist}
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, nil, err
		}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(name), uploadPrefix+hex.EncodeToString(rnd[:]))
	co.Exclusive, co.Truncate, co.Update, co.Final = true, false, false, name
	w, err := store.Create(ctx, s.srv.store, tmp, co)
	if err != nil {
		return nil, nil, renamedErr(err, name, tmp)
	}
	return w, &posc{ns: ns, w: w, ctx: context.WithoutCancel(ctx), tmp: tmp, final: name}, nil
}

// fail records a failed write, sync or truncate: the file will not be kept.
func (p *posc) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed == nil {
		p.failed = err
	}
}

// commit closes f and gives it its real name, or removes it if a change
// or the close failed.
func (p *posc) commit(log *slog.Logger, f store.File) error {
	p.mu.Lock()
	failed := p.failed
	p.mu.Unlock()
	cerr := f.Close()
	switch {
	case failed != nil:
		p.remove(log, "a write failed: "+failed.Error())
		return fmt.Errorf("close %s: not kept (persist-on-successful-close) because a write failed: %w", p.final, failed)
	case cerr != nil:
		p.remove(log, "close failed: "+cerr.Error())
		return renamedErr(cerr, p.final, p.tmp)
	}
	if err := store.Land(p.ctx, p.w, p.ns, p.tmp, p.final); err != nil {
		p.remove(log, "rename failed: "+err.Error())
		return err
	}
	return nil
}

// abort closes f and removes it: the client never closed it successfully.
func (p *posc) abort(log *slog.Logger, f store.File, why string) {
	f.Close()
	p.remove(log, why)
}

func (p *posc) remove(log *slog.Logger, why string) {
	log.Info("persist-on-successful-close file not kept", "path", p.final, "why", why)
	if err := store.Discard(p.ctx, p.w, p.ns, p.tmp); err != nil && !errors.Is(err, store.ErrNotFound) {
		log.Warn("cannot remove unfinished upload", "path", p.tmp, "err", err)
	}
}

// renamedErr makes store errors about the temporary name speak of the name
// the client asked for: clients never see the temporary names.
func renamedErr(err error, name, tmp string) error {
	return store.Renamed(err, "", tmp, name)
}

// writeFailed notes a failed change of of (for kXR_posc) and returns err,
// speaking of the name the client opened.
func (of *openFile) writeFailed(err error) error {
	if err != nil && of.posc != nil {
		err = renamedErr(err, of.posc.final, of.posc.tmp)
		of.posc.fail(err)
	}
	return err
}
