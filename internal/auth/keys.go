package auth

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"sitebox/internal/store"
)

// issuer is one trusted issuer and its cached key set. Keys are replaced
// only by a successful fetch, so an issuer that goes down keeps working
// on the keys it had.
type issuer struct {
	v   *Verifier
	cfg IssuerConfig // BasePath defaulted to "/"; Issuer kept exactly (iss must match it)
	log *slog.Logger

	mu        sync.Mutex // protects the fields below
	keys      []jwk
	fetched   time.Time     // last successful fetch
	attempted time.Time     // start of the last fetch, successful or not
	lastErr   error         // error of the last fetch, nil if it worked
	inflight  chan struct{} // closed when the running fetch ends; nil if none
}

func newIssuer(v *Verifier, ic IssuerConfig) (*issuer, error) {
	if err := checkIssuerURL(ic.Issuer); err != nil {
		return nil, err
	}
	if ic.JWKSFile != "" && ic.JWKSURL != "" {
		return nil, fmt.Errorf("issuer %q: set JWKSFile or JWKSURL, not both", ic.Issuer)
	}
	if ic.JWKSURL != "" && !strings.HasPrefix(ic.JWKSURL, "https://") {
		return nil, fmt.Errorf("issuer %q: JWKS URL %q is not https", ic.Issuer, ic.JWKSURL)
	}
	for _, a := range ic.Audiences {
		if a == "" {
			return nil, fmt.Errorf("issuer %q: empty audience", ic.Issuer)
		}
	}
	if ic.BasePath == "" {
		ic.BasePath = "/"
	}
	base, err := store.CleanPath(ic.BasePath)
	if err != nil || base != ic.BasePath || !strings.HasPrefix(base, "/") {
		return nil, fmt.Errorf("issuer %q: base path %q must be a clean absolute path", ic.Issuer, ic.BasePath)
	}
	if err := CheckVOs(ic.VOs); err != nil {
		return nil, fmt.Errorf("issuer %q: %w", ic.Issuer, err)
	}
	ic.VOs = slices.Clone(ic.VOs)
	return &issuer{v: v, cfg: ic, log: v.log.With("issuer", ic.Issuer)}, nil
}

// CheckVOs refuses VO names that no group could name: empty, or holding
// a slash or white space ("/cms" is a group; its VO is "cms").
func CheckVOs(vos []string) error {
	for _, vo := range vos {
		if vo == "" || strings.ContainsFunc(vo, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || isCtl(r) }) {
			return fmt.Errorf("bad VO name %q: a VO is a group's first component, without slashes (\"cms\" for /cms/...)", vo)
		}
	}
	return nil
}

// run refreshes the keys until ctx ends: every Refresh while the issuer
// answers, every MinRefetch while it does not, so it comes back without
// a restart even when no token arrives meanwhile.
func (is *issuer) run(ctx context.Context) {
	defer is.v.wg.Done()
	wait := time.Duration(0)
	if is.cfg.JWKSFile != "" {
		wait = is.v.cfg.Refresh // loaded by NewVerifier
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		select {
		case <-ctx.Done():
			return
		case <-is.refresh():
		}
		is.mu.Lock()
		wait = is.v.cfg.Refresh
		if is.lastErr != nil {
			wait = is.v.cfg.MinRefetch
		}
		is.mu.Unlock()
	}
}

// refresh starts a fetch unless one is running and returns a channel
// closed when it ends. Concurrent callers share one fetch.
func (is *issuer) refresh() <-chan struct{} {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.refreshLocked()
}

func (is *issuer) refreshLocked() <-chan struct{} {
	if is.inflight != nil {
		return is.inflight
	}
	done := make(chan struct{})
	is.inflight = done
	is.attempted = is.v.now()
	if !is.v.goroutine() {
		close(done) // closed verifier: nothing fetches any more
		is.inflight = nil
		return done
	}
	go func() {
		defer is.v.wg.Done()
		keys, err := is.fetch(is.v.ctx)
		is.mu.Lock()
		if err == nil {
			is.keys, is.fetched = keys, is.v.now()
		}
		failedBefore := is.lastErr != nil
		is.lastErr = err
		is.inflight = nil
		close(done)
		is.mu.Unlock()
		switch {
		case err != nil:
			is.log.Warn("cannot fetch issuer keys", "err", err)
		case failedBefore || len(keys) > 0:
			is.log.Info("issuer keys loaded", "keys", len(keys))
		}
	}()
	return done
}

// key returns the public key that checks a token signed with alg under
// kid. An unknown kid (or no keys yet) triggers one refetch, at most
// every MinRefetch, which callers wait for.
func (is *issuer) key(ctx context.Context, kid, alg string) (any, error) {
	for try := 0; ; try++ {
		is.mu.Lock()
		k, err := is.lookupLocked(kid, alg)
		if k != nil || err != nil {
			is.mu.Unlock()
			return k, err
		}
		if try > 0 || is.inflight == nil && is.v.now().Sub(is.attempted) < is.v.cfg.MinRefetch {
			err := is.missingLocked(kid)
			is.mu.Unlock()
			return nil, err
		}
		done := is.refreshLocked()
		is.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, &Denied{Reason: fmt.Sprintf("cannot fetch keys of issuer %q: %v", is.cfg.Issuer, ctx.Err()), Cause: ctx.Err()}
		}
	}
}

// lookupLocked finds kid's key: (nil, nil) when it is not in the set.
// A token without kid may use the only key of a one-key set.
func (is *issuer) lookupLocked(kid, alg string) (any, error) {
	if kid == "" {
		switch len(is.keys) {
		case 0:
			return nil, nil
		case 1:
			return is.keys[0].fits(is.cfg.Issuer, alg)
		}
		return nil, deny("token has no key id (kid) and issuer %q has %d keys", is.cfg.Issuer, len(is.keys))
	}
	for _, k := range is.keys {
		if k.kid == kid {
			return k.fits(is.cfg.Issuer, alg)
		}
	}
	return nil, nil
}

// missingLocked explains why no key was found.
func (is *issuer) missingLocked(kid string) error {
	if len(is.keys) == 0 && is.lastErr != nil {
		return &Denied{Reason: fmt.Sprintf("cannot fetch keys of issuer %q: %v", is.cfg.Issuer, is.lastErr), Cause: is.lastErr}
	}
	if len(is.keys) == 0 {
		return deny("issuer %q has no usable keys", is.cfg.Issuer)
	}
	msg := fmt.Sprintf("token key id %q is not among the %d keys of issuer %q", kid, len(is.keys), is.cfg.Issuer)
	if is.lastErr != nil {
		msg += fmt.Sprintf(" (its last key refresh failed: %v)", is.lastErr)
	}
	return deny("%s", msg)
}
