package director

import (
	"context"
	"sync"
)

// Run does the background work until ctx ends or the director is closed:
// it learns the static servers' sites, expires servers that stopped
// advertising, reloads the members file and probes static servers.
func (d *Director) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.life, cancel) // Close ends Run too
	defer stop()
	d.mu.Lock()
	start := !d.closed && !d.running
	d.running = d.running || start
	d.mu.Unlock()
	if !start {
		return nil // closed, or already running
	}
	var notes sync.WaitGroup
	for _, s := range d.cfg.Static {
		notes.Go(func() { d.sites.note(s.Site, hostOf(s.Root)) })
	}
	d.maintain(ctx)
	notes.Wait()
	return nil
}

// Close stops the background work and waits for Run to end.
func (d *Director) Close() error {
	d.stop()
	d.mu.Lock()
	d.closed = true
	running := d.running
	d.mu.Unlock()
	if running {
		<-d.done
	}
	if c, ok := d.probe.(interface{ Close() error }); ok {
		c.Close()
	}
	return nil
}
