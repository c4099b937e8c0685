package cache

import (
	"context"

	"sitebox/internal/store"
)

var _ store.Attributer = (*Cache)(nil)

// Attrs answers reads of a file's user attributes with the origin's,
// asked upstream as a checksum is (the cache keeps none of its own), and
// refuses changes as it refuses every change: read-only, make them at the
// origin. An https upstream has no attributes to ask for: unsupported.
func (c *Cache) Attrs(ctx context.Context, name string, q store.AttrQuery) ([]store.Attr, error) {
	if q.Op.Changes() {
		return nil, readOnly(q.Op.String(), name)
	}
	p, r, err := c.routeOf(ctx, q.Op.String(), name)
	if err != nil {
		return nil, err
	}
	return r.Attrs(ctx, p, q)
}
