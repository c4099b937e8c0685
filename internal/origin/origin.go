// Package origin exports POSIX storage: namespace prefixes mapped onto one or
// more storage pools (directories, usually on different disks). New files go
// to the pool with the most free space, reads find a file on whichever pool
// holds it, and listings merge the pools.
//
// Every filesystem access goes through an os.Root per pool, so no spelling
// of a path — "..", absolute or escaping symlinks — reaches outside a pool.
// Paths come cleaned by the frontend (store.CleanPath) and are not cleaned
// again here; the os.Root confinement does not depend on it.
package origin

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync/atomic"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// Export maps a namespace prefix onto storage pools; it is what each
// [[export]] of the config file decodes into (see Exports.Validate).
type Export struct {
	Prefix   string   `toml:"prefix"`    // namespace path, e.g. "/store/user"
	Pools    []string `toml:"pools"`     // directories on disk; at least one
	ReadOnly bool     `toml:"read_only"` // refuse every change under Prefix
}

// Config lists the exports. Prefixes must be distinct; a longer prefix
// takes precedence inside a shorter one ("/store/user" inside "/store").
type Config struct {
	Exports []Export
	// Checksums are the algorithms computed for clients; the zero value
	// offers adler32 and crc32c.
	Checksums cksum.Offered
}

// Validate reports the first problem in c without touching the disk.
func (c Config) Validate() error {
	if len(c.Exports) == 0 {
		return errors.New("origin: no exports configured")
	}
	seen := map[string]bool{}
	for _, e := range c.Exports {
		p, err := store.CleanPath(e.Prefix)
		if err != nil || p != e.Prefix {
			return fmt.Errorf("origin: export prefix %q must be a clean absolute path", e.Prefix)
		}
		if seen[p] {
			return fmt.Errorf("origin: export prefix %q listed twice", p)
		}
		seen[p] = true
		if len(e.Pools) == 0 {
			return fmt.Errorf("origin: export %q has no storage pools", p)
		}
		for _, d := range e.Pools {
			if !strings.HasPrefix(d, "/") {
				return fmt.Errorf("origin: pool %q of export %q must be an absolute directory", d, p)
			}
		}
	}
	return nil
}

// Origin implements store.Store, store.Namespace and store.SpaceReporter
// over the configured exports. Safe for concurrent use.
type Origin struct {
	exports store.PrefixTable[*export]
	sums    cksum.Keeper
	offered cksum.Offered
	log     *slog.Logger
	// writers lets one client at a time write a file, whichever
	// frontend it comes through (store.WriterLocker).
	writers store.Writers
	umask   fs.FileMode // the process's, read once (umask.go)
}

type export struct {
	prefix   string
	pools    []*pool
	readOnly bool
	attrs    attrKeeper // attrs.go
	// noResident is set once a read from one of its pools could not
	// be limited to what the page cache holds (file.readResident).
	noResident atomic.Bool
	// noCachestat is set once the kernel turned out to have no cachestat
	// (before Linux 6.5): residency is then asked with mincore (lend.go).
	noCachestat atomic.Bool
	// mappings counts the export's files mapped (lend.go).
	mappings atomic.Int64
}

var (
	_ store.Store         = (*Origin)(nil)
	_ store.Namespace     = (*Origin)(nil)
	_ store.SpaceReporter = (*Origin)(nil)
	_ store.WriterLocker  = (*Origin)(nil)
)

// New opens every pool directory. A missing pool is an error: silently
// serving a namespace with a pool absent would hide its files.
func New(cfg Config, log *slog.Logger) (*Origin, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &Origin{log: log.With("component", "origin"), offered: cfg.Checksums, umask: processUmask()}
	for _, e := range cfg.Exports {
		ex := &export{prefix: e.Prefix, readOnly: e.ReadOnly}
		for _, dir := range e.Pools {
			p, err := openPool(dir) // pool.go
			if err != nil {
				o.Close()
				return nil, fmt.Errorf("origin: export %s: open pool: %w", e.Prefix, err)
			}
			ex.pools = append(ex.pools, p)
		}
		o.exports.Add(ex.prefix, ex)
	}
	for _, ex := range o.exports.All() {
		o.log.Info("export", "prefix", ex.prefix, "pools", len(ex.pools), "read_only", ex.readOnly)
	}
	return o, nil
}

// Close releases the pool directory handles.
func (o *Origin) Close() error {
	for _, ex := range o.exports.All() {
		for _, p := range ex.pools {
			p.close()
		}
	}
	return nil
}

// resolve finds the export serving the clean namespace path name and the
// path relative to its pools ("." for the export's top).
func (o *Origin) resolve(name string) (*export, string, bool) {
	ex, ok := o.exports.Lookup(name)
	if !ok {
		return nil, "", false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(name, ex.prefix), "/")
	if rel == "" {
		rel = "."
	}
	return ex, rel, true
}

// virtualChildren returns the next path elements of export prefixes below
// name, so that "/" and "/store" list and stat as directories when only
// "/store/user" is exported.
func (o *Origin) virtualChildren(name string) []string {
	return o.exports.Children(name)
}
