package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// loadResult is what n clients achieved against one server in one
// measurement.
type loadResult struct {
	Done       int // answers as wanted (redirects, or stat answers direct)
	Waits      int // kXR_wait answers, each retried after its wait
	Errors     int
	FirstError string
	Elapsed    time.Duration // from the first request to the last answer
	// Latencies of every successful round trip, sorted.
	Latencies []time.Duration
}

// PerSec is successful answers per second.
func (r *loadResult) PerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Done) / r.Elapsed.Seconds()
}

// Quantile returns the q-quantile (0 < q ≤ 1) of the latencies, nearest
// rank.
func (r *loadResult) Quantile(q float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	i := int(q*float64(n)+0.999999) - 1
	return r.Latencies[min(max(i, 0), n-1)]
}

// runLoad runs n clients against addr for d, each on its own connection,
// sending op for paths round-robin (client i starting i·len(paths)/n in, so
// they do not move in step). A client whose connection breaks redials
// once per failure; one that cannot redial stops.
func runLoad(ctx context.Context, addr string, op *loadOp, paths []string, n int, d time.Duration) (*loadResult, error) {
	if len(paths) == 0 || n <= 0 {
		return nil, fmt.Errorf("load: %d paths, %d clients", len(paths), n)
	}
	conns := make([]*loadConn, n)
	for i := range conns {
		c, err := dialLoad(ctx, addr)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, err
		}
		conns[i] = c
	}
	results := make([]clientLoad, n)
	start := time.Now()
	until := start.Add(d)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			results[i].run(ctx, addr, conns[i], op, paths, i*len(paths)/n, until)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	total := &loadResult{}
	var last time.Time
	for _, r := range results {
		total.Done += r.Done
		total.Waits += r.Waits
		total.Errors += r.Errors
		if total.FirstError == "" {
			total.FirstError = r.FirstError
		}
		total.Latencies = append(total.Latencies, r.Latencies...)
		if r.last.After(last) {
			last = r.last
		}
	}
	total.Elapsed = last.Sub(start)
	slices.Sort(total.Latencies)
	return total, nil
}

// clientLoad is what one load client measured, and when it last did.
type clientLoad struct {
	loadResult
	last time.Time
}

func (r *clientLoad) fail(err error) {
	r.Errors++
	if r.FirstError == "" {
		r.FirstError = err.Error()
	}
}

// run sends op for paths round-robin from first over c until the
// deadline, redialling after a transport error; it closes c.
func (r *clientLoad) run(ctx context.Context, addr string, c *loadConn, op *loadOp, paths []string, first int, until time.Time) {
	r.Latencies = make([]time.Duration, 0, 4096)
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	for k := first; time.Now().Before(until) && ctx.Err() == nil; k++ {
		lat, waits, err := c.attempt(ctx, op, paths[k%len(paths)], until)
		r.Waits += waits
		r.last = time.Now()
		var te errTransport
		switch {
		case err == nil:
			r.Done++
			r.Latencies = append(r.Latencies, lat)
		case errors.Is(err, errDeadline) || ctx.Err() != nil:
		case errors.As(err, &te):
			r.fail(err)
			c.Close()
			if c, err = dialLoad(ctx, addr); err != nil {
				r.fail(err)
				return
			}
		default:
			r.fail(err)
		}
	}
}

// warmUp sends op once for every path over a few parallel connections,
// honouring waits for up to budget per path, so a redirector has located
// every file before it is measured. Any failure is returned.
func warmUp(ctx context.Context, addr string, op *loadOp, paths []string, budget time.Duration) (waits int, err error) {
	workers := min(8, len(paths))
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			c, err := dialLoad(ctx, addr)
			if err != nil {
				mu.Lock()
				first = firstErr(first, err)
				mu.Unlock()
				return
			}
			defer c.Close()
			for {
				mu.Lock()
				if next == len(paths) || first != nil {
					mu.Unlock()
					return
				}
				p := paths[next]
				next++
				mu.Unlock()
				_, w, err := c.attempt(ctx, op, p, time.Now().Add(budget))
				if errors.Is(err, errDeadline) {
					err = fmt.Errorf("%s %s: still asked to wait after %v", op.name, p, budget)
				}
				mu.Lock()
				waits += w
				first = firstErr(first, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first != nil {
		return waits, fmt.Errorf("warm-up: %w", first)
	}
	return waits, ctx.Err()
}

// firstErr keeps the first non-nil error.
func firstErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}
