package auth

import (
	"context"
	"errors"

	"sitebox/internal/store"
)

// createdFile is a file the guard's Create made new for the request: the
// request may remove it again whatever its scopes (an upload cleaning up
// its temporary after a failure), through Discard. The file itself is
// the proof, so nothing about it needs recording on the shared request.
type createdFile struct {
	store.WritableFile
	discard func(ctx context.Context) error
}

func (f createdFile) Discard(ctx context.Context) error { return f.discard(ctx) }

// createdFdFile keeps the inner file's descriptor for sendfile(2).
type createdFdFile struct {
	createdFile
	sf store.SendFiler
}

func (f createdFdFile) Fd() uintptr { return f.sf.Fd() }

var (
	_ store.Discarder = createdFile{}
	_ store.SendFiler = createdFdFile{}
)

// created makes w, new at p, able to discard itself.
func (g *guard) created(w store.WritableFile, p string) store.WritableFile {
	ns, ok := store.As[store.Namespace](g.inner)
	if !ok {
		return w
	}
	c := createdFile{w, func(ctx context.Context) error { return ns.Remove(ctx, p) }}
	if sf, ok := w.(store.SendFiler); ok {
		return createdFdFile{c, sf}
	}
	return c
}

// Discard passes on the inner file's Discard through the integrity mark.
func (f integrityWritable) Discard(ctx context.Context) error {
	if d, ok := f.WritableFile.(store.Discarder); ok {
		return d.Discard(ctx)
	}
	return errors.ErrUnsupported
}
