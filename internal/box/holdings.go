package box

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/store"
)

// How often the origin's holdings filter is rebuilt. A file written in
// between is found by the director's search of every server, as without
// filters, until the next filter has it. A slow listing (a network file
// system) is repeated less often: the walks take at most a
// holdingsDuty share of the time. A namespace too large for a filter is
// looked at again only after holdingsRetry.
const (
	holdingsEvery = time.Minute
	holdingsDuty  = 20 // times a walk's duration between walks
	holdingsRetry = 30 * time.Minute
)

// holdingsRole keeps the filter of the names the box's origin holds, for
// its advertisements (director.Holdings).
type holdingsRole struct {
	origin   store.Store
	prefixes []string
	log      *slog.Logger
	cur      atomic.Pointer[director.Holdings]
}

// Load returns the latest filter, nil before the first or when the
// exports hold too many names.
func (h *holdingsRole) Load() *director.Holdings {
	if h == nil {
		return nil
	}
	return h.cur.Load()
}

func (h *holdingsRole) Run(ctx context.Context) error {
	tooMany := false
	for {
		start := time.Now()
		hs, err := director.WalkHoldings(ctx, h.origin, h.prefixes)
		next := max(holdingsEvery, holdingsDuty*time.Since(start))
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, director.ErrTooManyNames):
			if !tooMany {
				h.log.Info("no holdings filter in the advertisements: the directors ask this origin for every file", "reason", err)
			}
			tooMany, next = true, holdingsRetry
		case err != nil:
			h.log.Warn("cannot build the holdings filter; the last one stays", "err", err)
		default:
			tooMany = false
		}
		if err == nil || tooMany {
			h.cur.Store(hs)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(next):
		}
	}
}

func (h *holdingsRole) Close() error { return nil }
