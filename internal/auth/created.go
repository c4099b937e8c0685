package auth

import (
	"context"
	"errors"
	"fmt"

	"sitebox/internal/store"
)

// createdFile is a file the guard's Create made new for the request: the
// request may remove it again whatever its scopes (an upload cleaning up
// its temporary after a failure), through Discard, and give it its final
// name with no right on its own name (an upload landing), through Land.
// The file itself is the proof, so nothing about it needs recording on
// the shared request.
type createdFile struct {
	store.WritableFile
	discard func(ctx context.Context) error
	land    func(ctx context.Context, final string) error
}

func (f createdFile) Discard(ctx context.Context) error { return f.discard(ctx) }

func (f createdFile) Land(ctx context.Context, final string) error { return f.land(ctx, final) }

// createdFdFile keeps the inner file's descriptor for sendfile(2).
type createdFdFile struct {
	createdFile
	sf store.SendFiler
}

func (f createdFdFile) Fd() uintptr { return f.sf.Fd() }

var (
	_ store.Discarder = createdFile{}
	_ store.Lander    = createdFile{}
	_ store.SendFiler = createdFdFile{}
)

// created makes w, new at p, able to discard itself and to land at a
// final name: final, when its Create named one (see createTemporary),
// else any. Landing needs what putting a file at the final name needs
// (landRule), nothing on p.
func (g *guard) created(w store.WritableFile, p, final string) store.WritableFile {
	ns, ok := store.As[store.Namespace](g.inner)
	if !ok {
		return w
	}
	land := func(ctx context.Context, to string) error {
		if final != "" && to != final {
			return &store.PathError{Op: "mv", Path: to, Err: fmt.Errorf("%w: this upload lands at %s", store.ErrInvalid, final)}
		}
		if err := g.landRule(ctx, "mv", to); err != nil {
			return err
		}
		return ns.Rename(ctx, p, to)
	}
	c := createdFile{w, func(ctx context.Context) error { return ns.Remove(ctx, p) }, land}
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

// Land passes on the inner file's Land through the integrity mark.
func (f integrityWritable) Land(ctx context.Context, final string) error {
	if l, ok := f.WritableFile.(store.Lander); ok {
		return l.Land(ctx, final)
	}
	return errors.ErrUnsupported
}
