package auth

import (
	"context"

	"sitebox/internal/store"
)

var _ store.Attributer = (*guard)(nil)

// Attrs needs read access to read attributes and storage.modify to
// change them: an attribute is part of the stored file.
func (g *guard) Attrs(ctx context.Context, name string, q store.AttrQuery) ([]store.Attr, error) {
	scope := store.ScopeRead
	if q.Op.Changes() {
		scope = store.ScopeModify
	}
	if err := g.check(ctx, q.Op.String(), scope, name); err != nil {
		return nil, err
	}
	return store.Attrs(ctx, g.inner, name, q)
}

// The guard's file wrappers pass attribute requests on to the file they
// wrap: opening it was the access check.
var (
	_ store.AttrFile = createdFile{}
	_ store.AttrFile = integrityFile{}
	_ store.AttrFile = integrityWritable{}
)

func (f createdFile) Attrs(q store.AttrQuery) ([]store.Attr, error) {
	return store.FileAttrs(f.WritableFile, "", q)
}

func (f integrityFile) Attrs(q store.AttrQuery) ([]store.Attr, error) {
	return store.FileAttrs(f.File, "", q)
}

func (f integrityWritable) Attrs(q store.AttrQuery) ([]store.Attr, error) {
	return store.FileAttrs(f.WritableFile, "", q)
}

var _ store.WriterLocker = (*guard)(nil)

// LockWriter passes on inner's writer lock. It needs no check: a frontend
// takes it only around a create the guard checks, and gives it back when
// that is refused.
func (g *guard) LockWriter(name string, owner any) (func(), error) {
	return store.LockWriter(g.inner, name, owner)
}
