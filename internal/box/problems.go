package box

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// upstreamWindow is how long a rise in the cache's upstream errors keeps
// the dashboard red.
const upstreamWindow = time.Minute

// upstreamWatch notices the cache's upstream error counter rising, so
// the dashboard can show a failing upstream while it fails. It is safe
// for concurrent use.
type upstreamWatch struct {
	mu       sync.Mutex
	last     int64     // counter at the last look
	rose     time.Time // when it last rose
	recently int64     // errors counted since the window began
}

// note takes the counter's current value and reports how many errors
// arrived within the window (0 once it has passed without new ones).
func (w *upstreamWatch) note(errors int64, now time.Time) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if errors > w.last {
		if now.Sub(w.rose) > upstreamWindow {
			w.recently = 0
		}
		w.recently += errors - w.last
		w.rose = now
	}
	w.last = errors
	if now.Sub(w.rose) > upstreamWindow {
		return 0
	}
	return w.recently
}

// problems lists what the dashboard shows in red: directors that do not
// take this box's advertisements, a cache disk that fails, upstream
// errors of the cache within the last minute.
func (b *Box) problems(now time.Time) []string {
	var out []string
	if b.advertiser != nil {
		fails := b.advertiser.Failures()
		dirs := make([]string, 0, len(fails))
		for d := range fails {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		for _, d := range dirs {
			out = append(out, fmt.Sprintf("advertising to %s fails: %s", d, fails[d]))
		}
	}
	if b.cache != nil {
		st := b.cache.Stats()
		if st.DiskError != "" {
			out = append(out, "cache disk: "+st.DiskError)
		}
		if n := b.upstream.note(st.UpstreamErrors, now); n > 0 {
			out = append(out, fmt.Sprintf("cache upstream: %d failed operation(s) in the last minute", n))
		}
	}
	return out
}
