package origin

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// pool is one storage directory of an export. It follows the directory
// its path names: one deleted and made again, or a file system mounted
// over it, after the box started is served from then on, instead of the
// directory opened at start-up (which may be empty, unlinked or hidden
// under the mount). Test fixtures and operators do both.
type pool struct {
	dir string

	mu      sync.Mutex // protects the fields below
	root    *os.Root
	rootFI  fs.FileInfo // what root was opened on, to notice a new one
	retired []*os.Root  // earlier roots, closed with the origin: calls may still use them
}

func openPool(dir string) (*pool, error) {
	p := &pool{dir: dir}
	root, fi, err := openDir(dir)
	if err != nil {
		return nil, err
	}
	p.root, p.rootFI = root, fi
	return p, nil
}

func openDir(dir string) (*os.Root, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, nil, err
	}
	return root, fi, nil
}

// dirRoot is the pool's directory now: the one opened before if its path
// still names it (one stat), else the new directory there, opened. While
// the path names nothing (deleted, not yet made again) the old one is
// kept, and calls on it fail as they would on a missing directory.
func (p *pool) dirRoot() *os.Root {
	fi, err := os.Stat(p.dir)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || !fi.IsDir() || os.SameFile(fi, p.rootFI) {
		return p.root
	}
	root, rfi, err := openDir(p.dir)
	if err != nil {
		return p.root
	}
	p.retired = append(p.retired, p.root)
	p.root, p.rootFI = root, rfi
	return root
}

func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.retired {
		r.Close()
	}
	p.retired = nil
	if p.root == nil {
		return nil
	}
	err := p.root.Close()
	if err != nil {
		err = fmt.Errorf("close pool %s: %w", p.dir, err)
	}
	return err
}
