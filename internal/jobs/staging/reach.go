package staging

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"sitebox/internal/jobs"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/transfer"
)

// target is the store a staged file is in, with its path there.
type target struct {
	transfer.Remote
	// replace: an output may replace a file already there. Only the box's
	// token writing for an owner who may create but not modify forbids it.
	replace bool
}

// reach returns the store pl is in, and the context to call it with: the
// box's own namespace with the owner as the request's identity, or a
// client of another server carrying only what may go there. op is the
// scope the transfer needs (store.ScopeRead, or store.ScopeModify for an
// output, which may also be only a new file's create). Close the
// target's Closer when done.
func (s *Stager) reach(ctx context.Context, as jobs.StageOwner, pl place, op string) (context.Context, *target, error) {
	if pl.Server == nil {
		if s.Local == nil {
			return ctx, nil, errors.New("the box serves no namespace of its own; set [jobs] cache to the site cache")
		}
		// Nothing crosses a wire, so the request counts as encrypted.
		req := &store.Request{Client: "job:" + as.Job, Proto: "job", Identity: as.Identity, TLS: true}
		return store.WithRequest(ctx, req), &target{Remote: transfer.Remote{Store: s.Local, Path: pl.Path, Closer: nopCloser{}}, replace: true}, nil
	}
	opts := transfer.Options{CAFile: s.CAFile, Options: outbound.Options{DialContext: s.dial, RedirectTo: s.mayRedirect}}
	replace := true
	if tok := s.token(pl); tok != nil {
		var err error
		if replace, err = s.judge(as, op, pl.Path); err != nil {
			return ctx, nil, &store.PathError{Op: "stage", Path: pl.String(), Err: err}
		}
		opts.TokenFunc, opts.RedirectTo = tok, s.onlySite
	}
	c, err := pl.Server.Dial(opts)
	if err != nil {
		return ctx, nil, err
	}
	return ctx, &target{Remote: transfer.Remote{Store: c, Path: pl.Path, Closer: c}, replace: replace}, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// token is the box's token when pl may receive it: the site cache's
// server, over TLS.
func (s *Stager) token(pl place) func() string {
	if !pl.Site || s.Token == nil || !remote.Encrypted(pl.Server.Scheme) {
		return nil
	}
	return s.Token
}

// judge says whether the owner may do op on p by the box's namespace
// rules, before the box's own token does it for them; for an output, also
// whether it may replace a file there (modify) or only create one.
func (s *Stager) judge(as jobs.StageOwner, op, p string) (replace bool, err error) {
	if s.Policy == nil || s.Policy.AllowsAll() {
		return false, fmt.Errorf("the box has no [auth] namespace rules to judge %s's rights by, so it does not stage with its own token", as.Identity.Subject)
	}
	req := &store.Request{Identity: as.Identity, TLS: true}
	if op == store.ScopeRead {
		return false, s.Policy.Check(req, store.ScopeRead, p)
	}
	if err := s.Policy.Check(req, store.ScopeModify, p); err == nil {
		return true, nil
	}
	return false, s.Policy.Check(req, store.ScopeCreate, p)
}

// dial connects to the site cache's server as configured, and to any
// other server only as [tpc] allow lets it, address by address.
func (s *Stager) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if s.isSiteHost(addr) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return s.allow().DialContext(ctx, network, addr)
}

// mayRedirect lets an anonymous transfer follow a redirect to the site
// cache's server or to a server [tpc] allow names.
func (s *Stager) mayRedirect(hostport string) error {
	if s.isSiteHost(hostport) {
		return nil
	}
	return s.allow().CheckHost(hostport)
}

// onlySite keeps a transfer carrying the box's token on the site cache's
// server.
func (s *Stager) onlySite(hostport string) error {
	if s.isSiteHost(hostport) {
		return nil
	}
	return fmt.Errorf("redirect to %s refused: the box's stage token goes to the site cache's server only", hostport)
}

func (s *Stager) isSiteHost(hostport string) bool {
	c, ok := s.cache()
	return ok && strings.EqualFold(c.Host, hostport)
}

func (s *Stager) allow() *tpcallow.Policy {
	if s.Allow == nil {
		return &tpcallow.Policy{}
	}
	return s.Allow
}
