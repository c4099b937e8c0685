package cache

import (
	"context"
	"fmt"
	"strings"

	"sitebox/internal/cache/upstream"
	"sitebox/internal/store"
)

// routeOf cleans name and finds its route, refusing a path the cache may
// not serve (see ruled).
func (c *Cache) routeOf(ctx context.Context, op, name string) (string, *upstream.Route, error) {
	p, err := store.CleanPath(name)
	if err != nil {
		return "", nil, err
	}
	r := c.ups.Route(p)
	if r == nil {
		return "", nil, &store.PathError{Op: op, Path: p, Err: fmt.Errorf("%w: not below a cached prefix", store.ErrNotFound)}
	}
	if err := c.ruled(ctx, op, p); err != nil {
		return "", nil, err
	}
	return p, r, nil
}

// ruled refuses, when the cache fills with its own token, a path no
// access rule covers: the token may read what the origin protects, and
// without a rule here anyone would get it. The refusal names the missing
// rule, for the client and in the log.
func (c *Cache) ruled(ctx context.Context, op, p string) error {
	if !c.cfg.Private {
		return nil
	}
	for _, pre := range c.cfg.Ruled {
		if store.HasPrefix(p, pre) {
			return nil
		}
	}
	rules := "none is configured"
	if len(c.cfg.Ruled) > 0 {
		rules = "rules cover only " + strings.Join(c.cfg.Ruled, ", ")
	}
	reason := fmt.Sprintf("no [[auth.namespace]] rule covers %s at this cache, which reads its upstreams with its own credentials (upstream_token_file, upstream_proxy_file) and so serves only paths a rule protects (%s)", p, rules)
	r := store.RequestFrom(ctx)
	c.log.Info("access denied", "op", op, "path", p, "client", r.Client, "reason", reason)
	return &store.PathError{Op: op, Path: p, Err: fmt.Errorf("%w: %s", store.ErrPermission, reason)}
}
