package tpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"sitebox/internal/store"
)

// LocalSource opens name in st for reading. st is the box's store as the
// frontend sees it (wrapped by the auth guard), so the requester's right
// to read (storage.read) is checked here, before anything moves.
func LocalSource(ctx context.Context, st store.Store, name string) (Source, error) {
	f, err := st.Open(ctx, name)
	if err != nil {
		return Source{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return Source{}, err
	}
	return Source{
		File: f, Size: fi.Size, Close: f.Close,
		Checksum: func(ctx context.Context) (string, error) { return store.Checksum(ctx, st, name, ChecksumAlgo) },
	}, nil
}

// SinkOptions say how LocalSink treats an existing target and missing
// parent directories.
type SinkOptions struct {
	// Overwrite allows replacing an existing file; without it an existing
	// name is refused (ErrExist) before anything moves.
	Overwrite bool
	// MkParents creates missing parent directories (a TPC pull, as XRootD
	// does); without it a missing parent is ErrNotFound (WebDAV COPY).
	MkParents bool
	// Owner holds name's writer lock (store.WriterLocker) while the copy
	// runs: a root:// session, so that it may open its own destination
	// again. Nil: the sink is an owner of its own.
	Owner any
}

// LocalSink creates a hidden temporary next to name in st and renames it
// to name on Commit. st must implement store.Namespace. As with
// LocalSource, st checks the requester's right to write (storage.create).
// It reports whether name existed. The sink holds name's writer lock
// until Commit or Abort: another writer (root://, PUT, another copy) is
// refused with store.ErrLocked meanwhile, and this copy is refused if
// one is writing.
func LocalSink(ctx context.Context, st store.Store, name string, opts SinkOptions, log *slog.Logger) (Sink, bool, error) {
	ns, ok := store.As[store.Namespace](st)
	if !ok {
		return Sink{}, false, &store.PathError{Op: "copy", Path: name, Err: store.ErrUnsupported}
	}
	owner := opts.Owner
	if owner == nil {
		owner = new(byte)
	}
	unlock, err := store.LockWriter(st, name, owner)
	if err != nil {
		return Sink{}, false, err
	}
	sink, existed, err := localSink(ctx, st, ns, name, opts, log)
	if err != nil {
		unlock()
		return Sink{}, existed, err
	}
	commit, abort := sink.Commit, sink.Abort
	sink.Commit = func(ctx context.Context) error {
		defer unlock()
		return commit(ctx)
	}
	sink.Abort = func(ctx context.Context) {
		defer unlock()
		abort(ctx)
	}
	return sink, existed, nil
}

func localSink(ctx context.Context, st store.Store, ns store.Namespace, name string, opts SinkOptions, log *slog.Logger) (Sink, bool, error) {
	existed := false
	fi, err := st.Stat(ctx, name)
	switch {
	case err == nil && !opts.Overwrite:
		return Sink{}, true, &store.PathError{Op: "copy", Path: name, Err: fmt.Errorf("%w and Overwrite is F", store.ErrExist)}
	case err == nil && fi.IsDir():
		return Sink{}, true, &store.PathError{Op: "copy", Path: name, Err: store.ErrIsDir}
	case err == nil:
		existed = true
	case !errors.Is(err, store.ErrNotFound):
		return Sink{}, false, err
	}
	tmp, err := TempName(name)
	if err != nil {
		return Sink{}, false, err
	}
	named := func(err error) error { return store.Renamed(err, "", tmp, name) }
	f, err := store.Create(ctx, st, tmp, store.CreateOptions{Exclusive: true, MkParents: opts.MkParents, Final: name})
	if err != nil {
		return Sink{}, false, named(err)
	}
	return Sink{
		File:   f,
		Commit: func(ctx context.Context) error { return store.Land(ctx, f, ns, tmp, name) },
		Abort: func(ctx context.Context) {
			f.Close() // may be closed already: the error says nothing new
			if err := store.Discard(ctx, f, ns, tmp); err != nil && !errors.Is(err, store.ErrNotFound) && log != nil {
				log.Warn("cannot remove failed copy", "path", tmp, "err", err)
			}
		},
		NameErrors: named,
	}, existed, nil
}
