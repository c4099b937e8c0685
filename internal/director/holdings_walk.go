package director

import (
	"context"
	"errors"
	"fmt"
	"path"

	"sitebox/internal/store"
)

// ErrTooManyNames is WalkHoldings' answer for a namespace too large for
// a filter: its server sends none and is asked for every file.
var ErrTooManyNames = fmt.Errorf("more than %d names: too many for a holdings filter", MaxHoldingsNames)

// WalkHoldings builds the filter of the names st holds under prefixes
// (an origin's exports): every file and directory, listed directory by
// directory. It stops as soon as there are more than MaxHoldingsNames,
// so a large namespace costs one filter's worth of listing, not a walk
// of the whole of it. A directory that cannot be listed is left out (its
// files are found by the search a filter cannot help).
func WalkHoldings(ctx context.Context, st store.Store, prefixes []string) (*Holdings, error) {
	var names []string
	dirs := append([]string(nil), prefixes...)
	names = append(names, prefixes...)
	for len(dirs) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		entries, err := st.List(ctx, dir)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrPermission) || errors.Is(err, store.ErrInvalid) {
				continue
			}
			return nil, fmt.Errorf("listing %s: %w", dir, err)
		}
		for _, e := range entries {
			name := path.Join(dir, e.Name)
			names = append(names, name)
			if e.IsDir() {
				dirs = append(dirs, name)
			}
		}
		if len(names) > MaxHoldingsNames {
			return nil, ErrTooManyNames
		}
	}
	return NewHoldings(names), nil
}
