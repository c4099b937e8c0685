package origin

import (
	"context"
	"fmt"

	"golang.org/x/sys/unix"

	"sitebox/internal/store"
)

// space reads the free space of the filesystem under one pool.
func (p *pool) space() (st unix.Statfs_t, err error) {
	err = unix.Statfs(p.dir, &st)
	return st, err
}

// emptiest returns the pool with the most free bytes; the first pool when
// none can be measured.
func (ex *export) emptiest() *pool {
	best, bestFree := ex.pools[0], int64(-1)
	for _, p := range ex.pools {
		st, err := p.space()
		if err != nil {
			continue
		}
		if free := int64(st.Bavail) * st.Bsize; free > bestFree {
			best, bestFree = p, free
		}
	}
	return best
}

// Space sums the pools of the export holding name. Pools sharing one
// filesystem are counted once.
func (o *Origin) Space(ctx context.Context, name string) (store.Space, error) {
	ex, _, ok := o.resolve(name)
	if !ok {
		// The shortest export stands for the virtual directories above all.
		for _, e := range o.exports.All() {
			ex = e
		}
		if ex == nil {
			return store.Space{}, wrap("space", name, store.ErrNotFound)
		}
	}
	var sp store.Space
	seen := map[unix.Fsid]bool{}
	for _, p := range ex.pools {
		st, err := p.space()
		if err != nil {
			return store.Space{}, wrap("space", name, fmt.Errorf("statfs: %w", err))
		}
		if free := int64(st.Bavail) * st.Bsize; free > sp.LargestFree {
			sp.LargestFree = free
		}
		if seen[st.Fsid] {
			continue
		}
		seen[st.Fsid] = true
		sp.Total += int64(st.Blocks) * st.Bsize
		sp.Free += int64(st.Bavail) * st.Bsize
		sp.Files += int64(st.Files - st.Ffree)
		sp.FreeFiles += int64(st.Ffree)
	}
	return sp, nil
}
