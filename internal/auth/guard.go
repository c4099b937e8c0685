package auth

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"sitebox/internal/store"
)

// NewGuard returns inner with p enforced on every call, using the
// store.Request in the call's context (its Identity and TLS). The result
// implements store.Namespace and store.SpaceReporter exactly when inner
// does, so frontends' type assertions still tell what the backend can do.
// A nil p allows everything.
func NewGuard(inner store.Store, p *Policy, log *slog.Logger) store.Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p == nil {
		p = &Policy{}
	}
	g := &guard{inner: inner, p: p, log: log.With("component", "auth")}
	ns, isNS := inner.(store.Namespace)
	sp, isSpace := inner.(store.SpaceReporter)
	switch {
	case isNS && isSpace:
		return guardNSSpace{g, nsGuard{g, ns}, spaceGuard{g, sp}}
	case isNS:
		return guardNS{g, nsGuard{g, ns}}
	case isSpace:
		return guardSpace{g, spaceGuard{g, sp}}
	}
	return g
}

// The wrapper types: one per combination of optional interfaces.
type (
	guardNS struct {
		*guard
		nsGuard
	}
	guardSpace struct {
		*guard
		spaceGuard
	}
	guardNSSpace struct {
		*guard
		nsGuard
		spaceGuard
	}
)

var (
	_ store.Store         = (*guard)(nil)
	_ store.Namespace     = guardNS{}
	_ store.SpaceReporter = guardSpace{}
	_ store.Namespace     = guardNSSpace{}
	_ store.SpaceReporter = guardNSSpace{}
)

// guard checks the policy before each store.Store call.
type guard struct {
	inner store.Store
	p     *Policy
	log   *slog.Logger
}

// check cleans name and checks op on it. A denial is logged once, here,
// at Info with who asked (the subject, never the token) and why, and
// returned as a store.PathError wrapping the *Denied.
func (g *guard) check(ctx context.Context, opName, op, name string) (string, error) {
	p, err := store.CleanPath(name)
	if err != nil {
		return "", err
	}
	if err := g.p.Check(store.RequestFrom(ctx), op, p); err != nil {
		return "", g.denied(ctx, opName, p, err)
	}
	return p, nil
}

func (g *guard) denied(ctx context.Context, opName, p string, err error) error {
	r := store.RequestFrom(ctx)
	var sub, iss string
	if r.Identity != nil {
		sub, iss = r.Identity.Subject, r.Identity.Issuer
	}
	g.log.Info("access denied", "op", opName, "path", p, "subject", sub, "issuer", iss,
		"client", r.Client, "tls", r.TLS, "reason", err.Error())
	return &store.PathError{Op: opName, Path: p, Err: err}
}

func (g *guard) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	p, err := g.check(ctx, "stat", store.ScopeRead, name)
	if err != nil {
		return store.FileInfo{}, err
	}
	return g.inner.Stat(ctx, p)
}

func (g *guard) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	p, err := g.check(ctx, "list", store.ScopeRead, name)
	if err != nil {
		return nil, err
	}
	return g.inner.List(ctx, p)
}

func (g *guard) Checksum(ctx context.Context, name, algo string) (string, error) {
	p, err := g.check(ctx, "checksum", store.ScopeRead, name)
	if err != nil {
		return "", err
	}
	return g.inner.Checksum(ctx, p, algo)
}

func (g *guard) Locate(ctx context.Context, name string) ([]store.Location, error) {
	p, err := g.check(ctx, "locate", store.ScopeRead, name)
	if err != nil {
		return nil, err
	}
	return g.inner.Locate(ctx, p)
}

// Open checks read access; a file of an integrity-protected namespace
// opened without TLS comes back marked (see integrityFile).
func (g *guard) Open(ctx context.Context, name string) (store.File, error) {
	p, err := g.check(ctx, "open", store.ScopeRead, name)
	if err != nil {
		return nil, err
	}
	f, err := g.inner.Open(ctx, p)
	if err != nil || g.p.Protection(p) != LevelIntegrity || store.RequestFrom(ctx).TLS {
		return f, err
	}
	return markIntegrity(f), nil
}

// Create needs storage.modify when it may change an existing file and
// storage.create for a new one. Only when the caller lacks modify do we
// ask inner whether the file exists, and then we make the create
// exclusive so a file appearing meanwhile is not overwritten on a
// create-only scope.
func (g *guard) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	p, err := store.CleanPath(name)
	if err != nil {
		return nil, err
	}
	w, fresh, err := g.create(ctx, p, opts)
	r := store.RequestFrom(ctx)
	if err == nil && fresh {
		r.MarkCreated(p) // it may undo its own upload (see Remove)
	}
	if err != nil || g.p.Protection(p) != LevelIntegrity || r.TLS {
		return w, err
	}
	return integrityWritable{w}, nil
}

// create checks and creates; fresh reports that the file is certainly
// new (an exclusive create).
func (g *guard) create(ctx context.Context, p string, opts store.CreateOptions) (w store.WritableFile, fresh bool, err error) {
	r := store.RequestFrom(ctx)
	if opts.Exclusive {
		if err := g.p.Check(r, store.ScopeCreate, p); err != nil {
			return nil, false, g.denied(ctx, "create", p, err)
		}
		w, err = g.inner.Create(ctx, p, opts)
		return w, true, err
	}
	modErr := g.p.Check(r, store.ScopeModify, p)
	if modErr == nil {
		w, err = g.inner.Create(ctx, p, opts)
		return w, false, err
	}
	if opts.Update { // only ever changes an existing file
		return nil, false, g.denied(ctx, "create", p, modErr)
	}
	if err := g.p.Check(r, store.ScopeCreate, p); err != nil {
		return nil, false, g.denied(ctx, "create", p, err)
	}
	if _, err := g.inner.Stat(ctx, p); !errors.Is(err, store.ErrNotFound) {
		return nil, false, g.denied(ctx, "create", p, modErr)
	}
	opts.Exclusive, opts.Truncate = true, false
	w, err = g.inner.Create(ctx, p, opts)
	return w, true, err
}

// nsGuard checks the policy before each store.Namespace call.
type nsGuard struct {
	g  *guard
	ns store.Namespace
}

func (n nsGuard) Mkdir(ctx context.Context, name string, perm fs.FileMode, parents bool) error {
	p, err := n.g.check(ctx, "mkdir", store.ScopeCreate, name)
	if err != nil {
		return err
	}
	return n.ns.Mkdir(ctx, p, perm, parents)
}

// Remove needs storage.modify, except for a file the same request
// created: an upload cleaning up its temporary after a failure.
func (n nsGuard) Remove(ctx context.Context, name string) error {
	if p, err := store.CleanPath(name); err == nil && store.RequestFrom(ctx).CreatedHere(p) {
		return n.ns.Remove(ctx, p)
	}
	p, err := n.g.check(ctx, "rm", store.ScopeModify, name)
	if err != nil {
		return err
	}
	return n.ns.Remove(ctx, p)
}

func (n nsGuard) Rmdir(ctx context.Context, name string) error {
	p, err := n.g.check(ctx, "rmdir", store.ScopeModify, name)
	if err != nil {
		return err
	}
	return n.ns.Rmdir(ctx, p)
}

func (n nsGuard) Chmod(ctx context.Context, name string, perm fs.FileMode) error {
	p, err := n.g.check(ctx, "chmod", store.ScopeModify, name)
	if err != nil {
		return err
	}
	return n.ns.Chmod(ctx, p, perm)
}

// Rename needs modify on the source and, on the destination, modify, or
// create when nothing is there yet (WLCG: create allows a rename onto a
// new name). The existence check and the rename are not atomic; a file
// appearing at the destination in between is replaced.
func (n nsGuard) Rename(ctx context.Context, from, to string) error {
	src, err := store.CleanPath(from)
	if err != nil {
		return err
	}
	dst, err := store.CleanPath(to)
	if err != nil {
		return err
	}
	r := store.RequestFrom(ctx)
	srcMod := n.g.p.Check(r, store.ScopeModify, src)
	dstMod := n.g.p.Check(r, store.ScopeModify, dst)
	if srcMod == nil && dstMod == nil {
		return n.ns.Rename(ctx, src, dst)
	}
	// The WLCG profile lets storage.create rename files onto names that
	// do not exist yet (how an upload lands: written under a temporary
	// name, then renamed); anything else changes stored data: modify.
	if srcMod != nil {
		if err := n.g.p.Check(r, store.ScopeCreate, src); err != nil {
			return n.g.denied(ctx, "mv", src, srcMod)
		}
	}
	if err := n.g.p.Check(r, store.ScopeCreate, dst); err != nil {
		return n.g.denied(ctx, "mv", dst, err)
	}
	if _, err := n.g.inner.Stat(ctx, dst); !errors.Is(err, store.ErrNotFound) {
		why := dstMod
		if why == nil {
			why = srcMod
		}
		return n.g.denied(ctx, "mv", dst, why)
	}
	return n.ns.Rename(ctx, src, dst)
}

// spaceGuard checks read access before store.SpaceReporter.Space.
type spaceGuard struct {
	g  *guard
	sp store.SpaceReporter
}

func (s spaceGuard) Space(ctx context.Context, name string) (store.Space, error) {
	p, err := s.g.check(ctx, "space", store.ScopeRead, name)
	if err != nil {
		return store.Space{}, err
	}
	return s.sp.Space(ctx, p)
}
