package cache

import (
	"context"
	"errors"
)

// Run starts the background work — the disk writers, the flusher of
// block maps, the purger, the closer of idle upstream files and the dialer
// of upstream connections — and returns nil when ctx ends or the cache is
// closed (at once on a closed cache). Without Run the cache still serves
// reads, but fetched blocks are not written behind (the write queue drops
// them once full) and nothing is purged. Close drains the writers; call it
// after Run returns.
func (c *Cache) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Close ends the flusher and the purger too, not only ctx.
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	if started, err := c.start(ctx); !started {
		return err // closed already (nil), or a second Run
	}
	<-ctx.Done()
	c.bg.Wait()
	return nil
}

// start reports whether it started the background work: not on a
// closed cache, where there is nothing left to do.
func (c *Cache) start(ctx context.Context) (bool, error) {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	switch {
	case c.closed.Load():
		return false, nil
	case c.running:
		return false, errors.New("cache: Run called twice")
	}
	c.running = true
	// Several writers, so one write stalled behind the disk's writeback
	// does not hold up the queue. They end when Close closes the queue,
	// after the last fetch has handed its block over.
	for range 4 {
		c.wg.Add(1)
		go c.writer()
	}
	c.bg.Add(5)
	go c.scan(ctx)
	go func() {
		defer c.bg.Done()
		c.ups.Run(ctx)
	}()
	go c.flusher(ctx)
	go c.purger(ctx)
	go c.handleReaper(ctx)
	return true, nil
}
