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

// Rename needs storage.modify on the source: moving a file away changes
// what is stored at its name as much as deleting it does, so
// storage.create alone moves nothing (an upload landing its own
// temporary does not come here: see createdFile.Land). On the
// destination it needs what putting a file there needs (landRule).
func (g *guard) Rename(ctx context.Context, src, dst string) error {
	ns, err := g.namespace("mv", src)
	if err != nil {
		return err
	}
	if err := g.renameRule(ctx, src, dst); err != nil {
		return err
	}
	return ns.Rename(ctx, src, dst)
}

func (g *guard) renameRule(ctx context.Context, src, dst string) error {
	if err := g.check(ctx, "mv", store.ScopeModify, src); err != nil {
		return err
	}
	return g.landRule(ctx, "mv", dst)
}

// landRule is what putting a file at dst by a rename needs: modify, or
// create when nothing is there yet (WLCG: create allows a rename onto a
// new name). Only without modify is the store asked whether dst exists,
// without following links (replacing a link deletes it). The check and
// the rename are not atomic; a file appearing at dst in between is
// replaced.
func (g *guard) landRule(ctx context.Context, op, dst string) error {
	r := store.RequestFrom(ctx)
	modErr := g.p.Check(r, store.ScopeModify, dst)
	if modErr == nil {
		return nil
	}
	if err := g.p.Check(r, store.ScopeCreate, dst); err != nil {
		return g.denied(ctx, op, dst, err)
	}
	_, err := g.inner.Stat(store.NoFollow(ctx), dst)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case errors.Is(err, store.ErrLink):
		return err // the store refuses the path whatever the scopes
	}
	return g.denied(ctx, op, dst, modErr)
}

// Precheck answers what the change c would meet from the policy now, by
// the rules of the method that makes it, and then what inner's own
// Precheck answers.
func (g *guard) Precheck(ctx context.Context, c store.Call) error {
	var err error
	switch c.Op {
	case "rm", "rmdir", "chmod":
		err = g.check(ctx, c.Op, store.ScopeModify, c.Path)
	case "mkdir":
		err = g.check(ctx, c.Op, store.ScopeCreate, c.Path)
	case "mv":
		err = g.renameRule(ctx, c.Path, c.To)
	case "create":
		if c.Create.Exclusive {
			err = g.check(ctx, c.Op, store.ScopeCreate, c.Path)
		} else {
			err = g.landRule(ctx, c.Op, c.Path)
		}
	default:
		err = &store.PathError{Op: c.Op, Path: c.Path, Err: store.ErrUnsupported}
	}
	if err != nil {
		return err
	}
	return store.Precheck(ctx, g.inner, c)
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
