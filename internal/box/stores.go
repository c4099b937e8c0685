package box

import (
	"fmt"

	"sitebox/internal/cache"
	"sitebox/internal/hostlist"
	"sitebox/internal/origin"
	"sitebox/internal/outbound"
	"sitebox/internal/remote"
	"sitebox/internal/store"
)

// buildStores makes the origin for the exports and the cache for the
// cached routes, mounted side by side when both are configured, and the
// director: the box's namespace when it plays no other role, else a
// store of its own (dirStore) served on the director's listeners.
func (b *Box) buildStores() (store.Store, error) {
	mounts := map[string]store.Store{}
	var only store.Store
	if len(b.cfg.Exports) > 0 {
		exports := b.cfg.Exports
		o, err := origin.New(origin.Config{Exports: exports, Checksums: b.cfg.Server.Offered()}, b.log) // origin adds its component
		if err != nil {
			return nil, err
		}
		b.add(roleFuncs{close: o.Close})
		var prefixes []string
		for _, e := range exports {
			mounts[e.Prefix] = o
			prefixes = append(prefixes, e.Prefix)
		}
		if len(b.cfg.Advertise.To) > 0 || b.cfg.Director.Enabled {
			b.holdings = &holdingsRole{origin: o, prefixes: prefixes, log: b.log.With("component", "advertise")}
			b.add(b.holdings)
		}
		only = o
	}
	if b.cfg.Director.Enabled {
		d, err := newDirector(b.cfg, b)
		if err != nil {
			return nil, err
		}
		b.director = d
		b.add(d)
		if !b.cfg.Director.OwnListeners() {
			return d, nil // the director is the box's whole namespace
		}
		// Beside data roles, on listeners of its own (buildFrontends).
		b.dirStore = b.guard(d)
	}
	if b.cfg.Cache.Enabled() {
		c, err := newCache(&b.cfg.Cache, b)
		if err != nil {
			return nil, err
		}
		b.cache = c
		b.add(c)
		for _, p := range c.Prefixes() {
			mounts[p] = c
		}
		only = c
	}
	if len(b.cfg.Exports) > 0 && b.cache != nil || only == nil {
		// Both side by side; or neither (a box that only runs jobs serves
		// an empty namespace).
		return store.NewMux(mounts), nil
	}
	return only, nil
}

func newCache(cc *cache.Settings, b *Box) (*cache.Cache, error) {
	cfg := cache.Config{Settings: *cc, Checksums: b.cfg.Server.Offered()}
	opts := cache.DialOptions{Streams: cc.Streams, Options: remote.Options{CAFile: cc.UpstreamCA, Insecure: cc.UpstreamInsecure, Options: outbound.Options{GridRoots: b.outbound.roots}}}
	if cc.UpstreamTokenFile != "" {
		tf, err := outbound.LoadTokenFile(cc.UpstreamTokenFile, b.log)
		if err != nil {
			return nil, fmt.Errorf("cache.upstream_token_file: %w", err)
		}
		opts.TokenFunc = tf.Token
	}
	if b.outbound.cacheProxy != nil {
		// The robot proxy goes to the configured upstreams and the hosts
		// trusted_redirects lists (RedirectTo below), as the token does.
		opts.Proxy = b.outbound.cacheProxy
	}
	if opts.TokenFunc != nil || opts.Proxy != nil {
		// Filled with the cache's own credentials: users are checked by
		// the box's namespace rules, as the origin would check them.
		cfg.Private = true
		for _, n := range b.cfg.Auth.Namespaces {
			cfg.Ruled = append(cfg.Ruled, n.Prefix)
		}
		for _, w := range b.cfg.CacheWarnings() {
			b.log.Warn("config", "key", w.Key, "warning", w.Msg)
		}
	}
	var ups []string
	for _, r := range cc.Routes {
		ups = append(ups, r.Upstreams...)
	}
	trust, err := hostlist.New(ups, cc.TrustedRedirects, "[cache] trusted_redirects")
	if err != nil {
		return nil, fmt.Errorf("cache.trusted_redirects: %w", err)
	}
	log := b.log.With("component", "cache")
	opts.RedirectTo = func(hostport string) error {
		err := trust.Check(hostport)
		if err != nil {
			log.Warn("upstream redirect refused", "to", hostport, "reason", err.Error())
		}
		return err
	}
	for _, r := range cc.Routes {
		route := cache.Route{Prefix: r.Prefix}
		for _, u := range r.Upstreams {
			up, err := cache.NewUpstream(u, opts)
			if err != nil {
				return nil, err
			}
			route.Upstreams = append(route.Upstreams, up)
		}
		cfg.Routes = append(cfg.Routes, route)
	}
	return cache.New(cfg, b.log.With("component", "cache"))
}

// Cache is the box's cache, or nil when it runs none.
func (b *Box) Cache() *cache.Cache { return b.cache }
