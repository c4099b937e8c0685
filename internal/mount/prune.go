package mount

import (
	"context"
	"log/slog"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The kernel keeps an inode for every name the mount gave it (each
// lookup, each entry of a READDIRPLUS) until memory pressure makes it
// forget them, and the mount keeps a node for each of those inodes. On
// a machine with plenty of memory a `find` over a million files would
// leave a million nodes here: the kernel never forgets. So past
// MaxNodes the mount asks the kernel to drop names nobody uses (leaves:
// files, and directories whose names below are gone), and forgets them
// when the kernel says it has (FORGET).
const defaultMaxNodes = 100_000

// pruneEvery is how often the node count is looked at, besides the
// nudge a lookup past the limit gives.
const pruneEvery = time.Second

// pruner drops kernel names past the limit.
type pruner struct {
	nodes *nodes
	max   int
	srv   *fuse.Server
	log   *slog.Logger
}

// run prunes until ctx ends: every pruneEvery, and when the node table
// grows past the limit.
func (p *pruner) run(ctx context.Context) {
	tick := time.NewTicker(pruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-p.nodes.over:
		}
		p.prune()
	}
}

// prune asks the kernel to forget enough leaves to bring the table to
// nine tenths of the limit, so it does not run again at every lookup.
func (p *pruner) prune() {
	excess := p.nodes.count() - p.max*9/10
	if p.nodes.count() <= p.max || excess <= 0 {
		return
	}
	victims := p.nodes.leaves(excess)
	if len(victims) == 0 {
		return
	}
	if p.srv.KernelSettings().SupportsNotify(fuse.NOTIFY_PRUNE) {
		inos := make([]uint64, len(victims))
		for i, v := range victims {
			inos[i] = v.ino
		}
		if st := p.srv.PruneNotify(inos); st.Ok() {
			return
		}
	}
	// Kernels before 6.16: invalidate each name (the kernel then drops
	// the dentry and, once unused, the inode).
	for _, v := range victims {
		if st := p.srv.EntryNotify(v.parent, v.name); !st.Ok() && st != fuse.ENOENT {
			p.log.Debug("kernel name not dropped", "name", v.name, "status", st.String())
		}
	}
}
