package bench

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// copyRec is one xrdcp run.
type copyRec struct {
	file       int
	warm       bool
	start, end time.Time
	bytes      int64 // the file's size when the copy succeeded, else 0
	err        error
}

// pointRun is the raw outcome of one point's two phases.
type pointRun struct {
	t0, coldEnd  time.Time // the cold phase
	warmStart    time.Time
	warmDeadline time.Time // no warm copy starts after it
	end          time.Time // the last warm copy finished
	recs         []copyRec
	upCold       int64 // relay bytes by coldEnd
	upAll        int64 // relay bytes at the end
	peakRSS      int64 // highest sampled own RSS of the cache process (peers.OwnRSS)
	// CPU time the cache process used in each phase (0 without one).
	cpuCold, cpuWarm time.Duration
}

// runPhases runs n clients against host through the two phases:
//
//   - cold: the clients share one queue holding every file once, in random
//     order, and each copies the next file from it until it is empty or
//     ColdMax has passed (no copy starts after that). The phase ends when
//     its last copy does, so every file read in it was read exactly once,
//     from an empty cache.
//   - warm: for Warm, each client copies files picked at random among
//     those read in the cold phase, so a cache should hold every one.
func (e *cacheEnv) runPhases(ctx context.Context, host string, n int, relay *Relay, rss func() (int64, error), cpu func() (time.Duration, error)) (*pointRun, error) {
	cfg := e.cfg
	r := &pointRun{}
	var mu sync.Mutex // protects r.recs
	record := func(rec copyRec) {
		mu.Lock()
		r.recs = append(r.recs, rec)
		mu.Unlock()
	}
	stopSampling := sampleRSS(rss, &r.peakRSS)
	defer stopSampling()

	if cpu == nil {
		cpu = func() (time.Duration, error) { return 0, nil }
	}
	cpu0, _ := cpu()
	order := rand.New(rand.NewPCG(cfg.Seed, uint64(n))).Perm(len(e.names))
	var next atomic.Int64
	r.t0 = time.Now()
	coldDeadline := r.t0.Add(cfg.ColdMax)
	clients(n, func(int) {
		for ctx.Err() == nil && time.Now().Before(coldDeadline) {
			i := int(next.Add(1)) - 1
			if i >= len(order) {
				return
			}
			record(e.copyFile(ctx, host, order[i], false))
		}
	})
	r.coldEnd = time.Now()
	r.upCold = relay.Down()
	cpu1, _ := cpu()
	r.cpuCold = cpu1 - cpu0
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var read []int
	var firstErr error
	for _, rec := range r.recs {
		if rec.err == nil {
			read = append(read, rec.file)
		} else if firstErr == nil {
			firstErr = rec.err
		}
	}
	if len(read) == 0 {
		return nil, fmt.Errorf("no file could be read in the cold phase: %w", firstErr)
	}

	r.warmStart = time.Now()
	r.warmDeadline = r.warmStart.Add(cfg.Warm)
	clients(n, func(c int) {
		pick := rand.New(rand.NewPCG(cfg.Seed, uint64(n)<<32|uint64(c)))
		for ctx.Err() == nil && time.Now().Before(r.warmDeadline) {
			record(e.copyFile(ctx, host, read[pick.IntN(len(read))], true))
		}
	})
	r.end = time.Now()
	r.upAll = relay.Down()
	cpu2, _ := cpu()
	r.cpuWarm = cpu2 - cpu1
	return r, ctx.Err()
}

// clients runs body(0..n-1) in parallel and waits for all.
func clients(n int, body func(client int)) {
	var wg sync.WaitGroup
	for c := range n {
		wg.Add(1)
		go func() { defer wg.Done(); body(c) }()
	}
	wg.Wait()
}

// copyFile reads one file whole with xrdcp into /dev/null.
func (e *cacheEnv) copyFile(ctx context.Context, host string, file int, warm bool) copyRec {
	url := "root://" + host + "/" + e.names[file]
	rec := copyRec{file: file, warm: warm, start: time.Now()}
	out, err := clientCmd(ctx, xrdcpArgs(url), nil).CombinedOutput()
	rec.end = time.Now()
	if err != nil {
		rec.err = fmt.Errorf("xrdcp %s: %v: %s", url, err, bytes.TrimSpace(out))
	} else {
		rec.bytes = e.cfg.FileSize
	}
	return rec
}

// sampleRSS polls rss every 200 ms into *peak until the returned stop is
// called; a nil rss (no cache process) samples nothing.
func sampleRSS(rss func() (int64, error), peak *int64) (stop func()) {
	if rss == nil {
		return func() {}
	}
	sample := func() {
		if v, err := rss(); err == nil && v > *peak {
			*peak = v
		}
	}
	sample()
	return every(200*time.Millisecond, sample)
}

// every runs f every period on a goroutine of its own until the returned
// stop is called; stop returns once f is no longer running.
func every(period time.Duration, f func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); <-finished }
}
