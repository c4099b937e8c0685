package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"

	"sitebox/internal/store"
)

// NewGuard returns inner with p enforced on every call, using the
// store.Request in the call's context (its Identity and TLS). The guard
// offers (through store.As) exactly the capabilities inner has, each
// checked here: no caller can reach inner around it. A nil p allows
// everything.
func NewGuard(inner store.Store, p *Policy, log *slog.Logger) store.Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p == nil {
		p = &Policy{}
	}
	return &guard{inner: inner, p: p, log: log.With("component", "auth")}
}

var (
	_ store.Store         = (*guard)(nil)
	_ store.Capable       = (*guard)(nil)
	_ store.Creator       = (*guard)(nil)
	_ store.Checksummer   = (*guard)(nil)
	_ store.Locator       = (*guard)(nil)
	_ store.Namespace     = (*guard)(nil)
	_ store.SpaceReporter = (*guard)(nil)
	_ store.Router        = (*guard)(nil)
	_ store.Prechecker    = (*guard)(nil)
)

// guard checks the policy before each call reaches inner. Paths come
// clean from the frontends (store.CleanPath) and are checked as they are.
type guard struct {
	inner store.Store
	p     rules
	log   *slog.Logger
}

// rules is what the guard asks of its Policy.
type rules interface {
	Check(r *store.Request, op, name string) error
	Decide(r *store.Request, op, name string) (Level, error)
	Protection(name string) Level
}

// decided is a decision the guard made while routing a call that is
// served here (Route): the policy allows scope on path for the request
// r. It is left in the request's context (store.Leave) for the call that
// follows, which takes it instead of asking the policy the same again.
// A decision is a function of the request and the immutable policy, so
// one taken for the same guard, request, scope and path is the answer.
type decided struct {
	g           *guard
	r           *store.Request
	scope, path string
}

// allowed asks the policy whether the request in ctx may do scope on p,
// unless the call was routed and that decision left for it.
func (g *guard) allowed(ctx context.Context, scope, p string) error {
	r := store.RequestFrom(ctx)
	if d, ok := store.Take(ctx).(decided); ok && d == (decided{g, r, scope, p}) {
		return nil
	}
	return g.p.Check(r, scope, p)
}

// As offers the guard itself for every capability inner has: its
// methods check the policy and then call inner's. Locate is offered
// always: every store has an answer (store.Locate's "here"), and a denied
// locate must say "locate".
func (g *guard) As(target any) bool {
	if l, ok := target.(*store.Locator); ok {
		*l = g
		return true
	}
	if pc, ok := target.(*store.Prechecker); ok {
		// The policy has its say on every change inner can make.
		if _, changes := store.As[store.Namespace](g.inner); !changes {
			return false
		}
		*pc = g
		return true
	}
	return store.Offer[store.Creator](g.inner, target, g) ||
		store.Offer[store.Checksummer](g.inner, target, g) ||
		store.Offer[store.Namespace](g.inner, target, g) ||
		store.Offer[store.SpaceReporter](g.inner, target, g) ||
		store.Offer[store.Router](g.inner, target, g) ||
		store.Offer[store.Attributer](g.inner, target, g) ||
		store.Offer[store.WriterLocker](g.inner, target, g)
}

// check checks op on the clean path p. A denial is logged once, here, at
// Info with who asked (the subject, never the token) and why, and
// returned as a store.PathError wrapping the *Denied.
func (g *guard) check(ctx context.Context, opName, op, p string) error {
	if err := g.allowed(ctx, op, p); err != nil {
		return g.denied(ctx, opName, p, err)
	}
	return nil
}

func (g *guard) denied(ctx context.Context, opName, p string, err error) error {
	r := store.RequestFrom(ctx)
	var sub, iss, how string
	var fqans []string
	if r.Identity != nil {
		sub, iss, how, fqans = r.Identity.Subject, r.Identity.Issuer, r.Identity.Method, r.Identity.FQANs
	}
	attrs := []any{"op", opName, "path", p, "subject", sub, "issuer", iss, "auth", how}
	if len(fqans) > 0 {
		attrs = append(attrs, "fqans", fqans) // an X.509 user's VOMS attributes
	}
	g.log.Info("access denied", append(attrs, "client", r.Client, "tls", r.TLS, "reason", err.Error())...)
	return &store.PathError{Op: opName, Path: p, Err: err}
}

// lacks is the answer for a capability inner does not have, should a
// caller assert it on the guard instead of asking As.
func lacks(op, p string) error {
	return &store.PathError{Op: op, Path: p, Err: store.ErrUnsupported}
}

func (g *guard) Stat(ctx context.Context, name string) (store.FileInfo, error) {
	if err := g.check(ctx, "stat", store.ScopeRead, name); err != nil {
		return store.FileInfo{}, err
	}
	return g.inner.Stat(ctx, name)
}

func (g *guard) List(ctx context.Context, name string) ([]store.FileInfo, error) {
	if err := g.check(ctx, "list", store.ScopeRead, name); err != nil {
		return nil, err
	}
	return g.inner.List(ctx, name)
}

func (g *guard) Checksum(ctx context.Context, name, algo string) (string, error) {
	if err := g.check(ctx, "checksum", store.ScopeRead, name); err != nil {
		return "", err
	}
	c, ok := store.As[store.Checksummer](g.inner)
	if !ok {
		return "", lacks("checksum", name)
	}
	return c.Checksum(ctx, name, algo)
}

func (g *guard) Locate(ctx context.Context, name string) ([]store.Location, error) {
	if err := g.check(ctx, "locate", store.ScopeRead, name); err != nil {
		return nil, err
	}
	return store.Locate(ctx, g.inner, name)
}

// Open checks read access; a file of an integrity-protected namespace
// opened without TLS comes back marked (see integrityFile). The decision
// and the protection come from one look-up of the path's namespace.
func (g *guard) Open(ctx context.Context, name string) (store.File, error) {
	level, err := g.decideRead(ctx, name)
	if err != nil {
		return nil, g.denied(ctx, "open", name, err)
	}
	f, err := g.inner.Open(ctx, name)
	if err != nil || level != LevelIntegrity || store.RequestFrom(ctx).TLS {
		return f, err
	}
	return markIntegrity(f), nil
}

// decideRead is allowed for a read of p, with the protection p needs.
func (g *guard) decideRead(ctx context.Context, p string) (Level, error) {
	r := store.RequestFrom(ctx)
	if d, ok := store.Take(ctx).(decided); ok && d == (decided{g, r, store.ScopeRead, p}) {
		return g.p.Protection(p), nil
	}
	return g.p.Decide(r, store.ScopeRead, p)
}

// Create needs storage.modify when it may change an existing file and
// storage.create for a new one. Only when the caller lacks modify do we
// ask inner whether the file exists, and then we make the create
// exclusive so a file appearing meanwhile is not overwritten on a
// create-only scope. A file certainly new comes back able to discard
// itself and to land at its final name (see createdFile).
func (g *guard) Create(ctx context.Context, name string, opts store.CreateOptions) (store.WritableFile, error) {
	c, ok := store.As[store.Creator](g.inner)
	if !ok {
		return nil, lacks("create", name)
	}
	w, fresh, err := g.create(ctx, c, name, opts)
	if err != nil {
		return nil, err
	}
	if fresh {
		w = g.created(w, name, opts.Final)
	}
	if g.p.Protection(name) != LevelIntegrity || store.RequestFrom(ctx).TLS {
		return w, nil
	}
	return integrityWritable{w}, nil
}

// create checks and creates; fresh reports that the file is certainly
// new (an exclusive create).
func (g *guard) create(ctx context.Context, c store.Creator, p string, opts store.CreateOptions) (w store.WritableFile, fresh bool, err error) {
	if opts.Final != "" {
		return g.createTemporary(ctx, c, p, opts)
	}
	r := store.RequestFrom(ctx)
	if opts.Exclusive {
		if err := g.allowed(ctx, store.ScopeCreate, p); err != nil {
			return nil, false, g.denied(ctx, "create", p, err)
		}
		w, err = c.Create(ctx, p, opts)
		return w, true, err
	}
	modErr := g.allowed(ctx, store.ScopeModify, p)
	if modErr == nil {
		w, err = c.Create(ctx, p, opts)
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
	w, err = c.Create(ctx, p, opts)
	return w, true, err
}

// createTemporary creates an upload's temporary tmp, which is to land at
// opts.Final: the policy is asked about the final name, as the landing
// will be (so a scope for exactly that file suffices, and a refusal
// names it), and the temporary is made new, the request's own.
func (g *guard) createTemporary(ctx context.Context, c store.Creator, tmp string, opts store.CreateOptions) (store.WritableFile, bool, error) {
	if path.Dir(opts.Final) != path.Dir(tmp) || opts.Final == tmp {
		return nil, false, &store.PathError{Op: "create", Path: opts.Final,
			Err: fmt.Errorf("%w: an upload's temporary must be a new name in the directory of its final name", store.ErrInvalid)}
	}
	if err := g.landRule(ctx, "create", opts.Final); err != nil {
		return nil, false, err
	}
	opts.Exclusive, opts.Truncate, opts.Update = true, false, false
	w, err := c.Create(ctx, tmp, opts)
	return w, true, err
}
