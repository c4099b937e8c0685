package box

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// role is a part of the box with a lifecycle, in the order Caddy gives its
// modules: its constructor builds it from its config and dependencies
// without starting anything; Run does its background work until ctx ends
// (every goroutine it starts ends by then, or by Close); Close releases
// what it holds, and must work whether Run ran or not, so that a box
// whose New failed halfway can still be closed.
type role interface {
	Run(ctx context.Context) error
	Close() error
}

// roleFuncs makes a role of a part that lacks one of the two methods
// (nil means nothing to do).
type roleFuncs struct {
	run   func(ctx context.Context) error
	close func() error
}

func (r roleFuncs) Run(ctx context.Context) error {
	if r.run == nil {
		return nil
	}
	return r.run(ctx)
}

func (r roleFuncs) Close() error {
	if r.close == nil {
		return nil
	}
	return r.close()
}

// add keeps r to run in Run and to close, in reverse order of adding,
// with everything else the box closes.
func (b *Box) add(r role) {
	b.parts = append(b.parts, r)
	b.closers = append(b.closers, r.Close)
}

// runParts starts every role's Run under g.
func (b *Box) runParts(ctx context.Context, g *errgroup.Group) {
	for _, r := range b.parts {
		g.Go(func() error { return r.Run(ctx) })
	}
}
