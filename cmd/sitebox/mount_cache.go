package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"sitebox/internal/cache"
	"sitebox/internal/remote"
	"sitebox/internal/units"
)

// startCache runs a cache.Cache in dir in front of the server u, filled
// with opts' credential; the Closer stops it.
func (f *mountFlags) startCache(ctx context.Context, dir string, u *remote.URL, opts remote.Options, dirTTL time.Duration, log *slog.Logger) (*cache.Cache, io.Closer, error) {
	cc, err := f.localCache(dir, u, opts, dirTTL, log)
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() {
		cc.Run(cctx)
		close(ran)
	}()
	return cc, closeFunc(func() error {
		cancel() // the cache's background work ends first,
		<-ran
		return cc.Close() // then its writers drain
	}), nil
}

// callerCacheDir is the cache directory of one credential (a View's
// Key) below root: each credential fills and reads its own, so nobody
// is served bytes fetched with another's rights. Only the mount's user
// may enter them.
func callerCacheDir(root, key string) (string, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return dir, nil
}

// localCache is a cache.Cache in dir with the mount's server as
// its one upstream, for the whole namespace.
func (f *mountFlags) localCache(dir string, u *remote.URL, opts remote.Options, dirTTL time.Duration, log *slog.Logger) (*cache.Cache, error) {
	host := u.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "443") // https:// without a port
	}
	// The user's own client follows redirects anywhere, as `sitebox get`
	// does (a director's answer); the cache's default follows none.
	opts.RedirectTo = func(string) error { return nil }
	up, err := cache.NewUpstream(u.Scheme+"://"+host, cache.DialOptions{Options: opts})
	if err != nil {
		return nil, err
	}
	var ram units.Size
	if err := ram.UnmarshalText([]byte(f.cacheRAM)); err != nil || ram <= 0 {
		return nil, fmt.Errorf("--cache-ram %q: want a size like 256MiB", f.cacheRAM)
	}
	reval := f.revalidate
	if reval <= 0 {
		reval = max(dirTTL, time.Second)
	}
	return cache.New(cache.Config{Settings: cache.Settings{Dir: dir, RAM: ram, Revalidate: units.Duration(reval)},
		Routes: []cache.Route{{Prefix: "/", Upstreams: []cache.Upstream{up}}}}, log.With("part", "cache"))
}

type closeFunc func() error

func (f closeFunc) Close() error { return f() }

// closers closes each in turn, the cache before the client it reads.
type closers []interface{ Close() error }

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
