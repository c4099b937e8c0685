// Package staging moves a job's data between the federation and its
// sandbox as the job's owner, never as the box.
//
// Jobs are how strangers make the box act, so staging follows the rules
// a client of the box is held to:
//   - A file in the box's own namespace (a federation path when the box
//     is the site cache, a URL naming one of the box's own listeners) is
//     read and written in-process through the box's auth guard with the
//     owner's identity and the rights of the token the job was submitted
//     with: exactly what that token could do as a client, no more.
//   - Another server is reached as an anonymous client, through the same
//     dial check as third-party copy ([tpc] allow), on names and on every
//     address, redirects included: a job cannot make the box reach what
//     its owner cannot reach.
//   - The box's own stage token goes to the site cache's server only
//     ([jobs] cache, over TLS, no redirect elsewhere), and only for a path
//     the box's own namespace rules let the owner reach.
//
// Every transfer is one access-log line and one log line naming the owner.
package staging

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"sitebox/internal/accesslog"
	"sitebox/internal/jobs"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/store"
	"sitebox/internal/tpc/tpcallow"
	"sitebox/internal/transfer"
)

// Judge decides what an identity may do where: the box's namespace rules
// (*auth.Policy).
type Judge interface {
	// Check says why r may not do op on the clean path name, or nil.
	Check(r *store.Request, op, name string) error
	// AllowsAll reports that there are no rules to judge by.
	AllowsAll() bool
}

// Stager is the box's jobs.Stager. Its zero value stages nothing but
// anonymous reads of servers [tpc] allow would let through (none).
type Stager struct {
	// Local is the box's own namespace behind its auth guard; nil when the
	// box serves none.
	Local store.Store
	// Self reports whether a host:port names one of the box's own data
	// listeners: URLs naming it are staged in Local.
	Self func(hostport string) bool
	// Cache is the site cache ([jobs] cache), "" for none: federation paths
	// (and, when set, other URLs by their path) are read there. A cache
	// naming the box itself means Local.
	Cache string
	// Token is the box's own bearer token for Cache's server, nil for
	// none; see the package comment for where it may go.
	Token func() string
	// Policy judges the owner before Token is used; without rules to judge
	// by, Token is never sent.
	Policy Judge
	// Allow says which other servers staging may reach ([tpc] allow); nil
	// reaches none.
	Allow *tpcallow.Policy
	// CAFile is an extra CA for https:// and roots:// servers.
	CAFile string
	// Access takes one line per transfer (nil: none).
	Access accesslog.Sink
	Log    *slog.Logger
}

var _ jobs.Stager = (*Stager)(nil)

// Fetch copies input in to the local file dst as its job's owner.
func (s *Stager) Fetch(ctx context.Context, as jobs.StageOwner, in spec.Input, dst string) error {
	pl, err := s.input(in.From)
	return s.move(ctx, as, "stage-in", in.From, pl, err, store.ScopeRead, func(ctx context.Context, r *target) (int64, error) {
		return transfer.Get(ctx, &r.Remote, dst, nil)
	})
}

// Deliver writes the local file src as name under destDir as its job's
// owner.
func (s *Stager) Deliver(ctx context.Context, as jobs.StageOwner, src, destDir, name string) error {
	pl, err := s.output(destDir, name)
	return s.move(ctx, as, "stage-out", destDir, pl, err, store.ScopeModify, func(ctx context.Context, r *target) (int64, error) {
		return transfer.Put(ctx, src, &r.Remote, r.replace, nil)
	})
}

// move reaches pl (unless naming it failed: err) for scope and runs the
// transfer there, then records it, under asked when pl has no path.
func (s *Stager) move(ctx context.Context, as jobs.StageOwner, op, asked string, pl place, err error, scope string,
	transfer func(context.Context, *target) (int64, error)) error {
	start := time.Now()
	var n int64
	if err == nil {
		var r *target
		if ctx, r, err = s.reach(ctx, as, pl, scope); err == nil {
			n, err = transfer(ctx, r)
			r.Close()
		}
	}
	if pl.Path == "" {
		pl.Path = asked
	}
	s.record(as, op, pl, n, start, err)
	return owned(as, err)
}

// owned says whose rights a refusal was judged by.
func owned(as jobs.StageOwner, err error) error {
	if err == nil || !errors.Is(err, store.ErrPermission) {
		return err
	}
	return fmt.Errorf("as %s (%s): %w", as.Identity.Subject, as.Identity.Issuer, err)
}

// record writes the access-log line and the log line of a transfer.
func (s *Stager) record(as jobs.StageOwner, op string, pl place, n int64, start time.Time, err error) {
	id := as.Identity
	vo := ""
	if vos := id.VOs(); len(vos) > 0 {
		vo = vos[0]
	}
	if s.Access != nil {
		s.Access.Transfer(accesslog.Entry{Time: time.Now(), Proto: "job", Op: op, Client: "job:" + as.Job,
			Auth: id.Method, Issuer: id.Issuer, Subject: id.Subject, VO: vo, FQANs: id.FQANs, Path: pl.String(), Bytes: n,
			Duration: time.Since(start), Result: accesslog.Result(err)})
	}
	if s.Log == nil {
		return
	}
	attrs := []any{"job", as.Job, "owner", id.Subject, "issuer", id.Issuer, "auth", id.Method, "op", op, "where", pl.String(), "via", pl.via(), "bytes", n}
	if err != nil {
		s.Log.Warn("staging failed", append(attrs, "err", err)...)
		return
	}
	s.Log.Info("staged", attrs...)
}
