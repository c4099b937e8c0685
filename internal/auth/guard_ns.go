package auth

import (
	"context"
	"errors"
	"io/fs"

	"sitebox/internal/store"
)

// namespace is inner's Namespace, or why the guard cannot offer one.
func (g *guard) namespace(op, p string) (store.Namespace, error) {
	ns, ok := store.As[store.Namespace](g.inner)
	if !ok {
		return nil, lacks(op, p)
	}
	return ns, nil
}

func (g *guard) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	if err := g.check(ctx, "mkdir", store.ScopeCreate, name); err != nil {
		return err
	}
	ns, err := g.namespace("mkdir", name)
	if err != nil {
		return err
	}
	return ns.Mkdir(ctx, name, perm, parents)
}

// Remove needs storage.modify. (An upload cleaning up its own temporary
// after a failure does not come here: it discards the file Create gave
// it, see createdFile.)
func (g *guard) Remove(ctx context.Context, name string) error {
	if err := g.check(ctx, "rm", store.ScopeModify, name); err != nil {
		return err
	}
	ns, err := g.namespace("rm", name)
	if err != nil {
		return err
	}
	return ns.Remove(ctx, name)
}

func (g *guard) Rmdir(ctx context.Context, name string) error {
	if err := g.check(ctx, "rmdir", store.ScopeModify, name); err != nil {
		return err
	}
	ns, err := g.namespace("rmdir", name)
	if err != nil {
		return err
	}
	return ns.Rmdir(ctx, name)
}

func (g *guard) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	if err := g.check(ctx, "chmod", store.ScopeModify, name); err != nil {
		return err
	}
	ns, err := g.namespace("chmod", name)
	if err != nil {
		return err
	}
	return ns.Chmod(ctx, name, perm)
}

// Rename needs modify on the source and, on the destination, modify, or
// create when nothing is there yet (WLCG: create allows a rename onto a
// new name). The existence check and the rename are not atomic; a file
// appearing at the destination in between is replaced.
func (g *guard) Rename(ctx context.Context, src, dst string) error {
	ns, err := g.namespace("mv", src)
	if err != nil {
		return err
	}
	r := store.RequestFrom(ctx)
	srcMod := g.p.Check(r, store.ScopeModify, src)
	dstMod := g.p.Check(r, store.ScopeModify, dst)
	if srcMod == nil && dstMod == nil {
		return ns.Rename(ctx, src, dst)
	}
	// The WLCG profile lets storage.create rename files onto names that
	// do not exist yet (how an upload lands: written under a temporary
	// name, then renamed); anything else changes stored data: modify.
	if srcMod != nil {
		if err := g.p.Check(r, store.ScopeCreate, src); err != nil {
			return g.denied(ctx, "mv", src, srcMod)
		}
	}
	if err := g.p.Check(r, store.ScopeCreate, dst); err != nil {
		return g.denied(ctx, "mv", dst, err)
	}
	if _, err := g.inner.Stat(ctx, dst); !errors.Is(err, store.ErrNotFound) {
		why := dstMod
		if why == nil {
			why = srcMod
		}
		return g.denied(ctx, "mv", dst, why)
	}
	return ns.Rename(ctx, src, dst)
}

// Space needs read access.
func (g *guard) Space(ctx context.Context, name string) (store.Space, error) {
	if err := g.check(ctx, "space", store.ScopeRead, name); err != nil {
		return store.Space{}, err
	}
	sr, ok := store.As[store.SpaceReporter](g.inner)
	if !ok {
		return store.Space{}, lacks("space", name)
	}
	return sr.Space(ctx, name)
}
