package director

import (
	"context"
	"sync"

	"sitebox/internal/store"
	"sitebox/internal/xrootd/client"
)

// rootProber asks servers over root://, one client (and its pooled
// connections) per server, so repeated searches do not pay a handshake.
type rootProber struct {
	mu  sync.Mutex
	fss map[string]*client.FS
}

func newRootProber() *rootProber { return &rootProber{fss: map[string]*client.FS{}} }

func (p *rootProber) fs(root string) *client.FS {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := p.fss[root]
	if f == nil {
		f = client.NewFS(root)
		p.fss[root] = f
	}
	return f
}

func (p *rootProber) Stat(ctx context.Context, root, name string) (store.FileInfo, error) {
	return p.fs(root).Stat(ctx, name)
}

func (p *rootProber) List(ctx context.Context, root, name string) ([]store.FileInfo, error) {
	return p.fs(root).List(ctx, name)
}

func (p *rootProber) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, f := range p.fss {
		f.Close()
		delete(p.fss, k)
	}
	return nil
}
