package sitebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"sitebox/internal/remote"
	"sitebox/internal/transfer"
)

// TransferConfig describes the transfer benchmark: N parallel clients,
// each copying files picked at random from URLs to /dev/null with
// sitebox's own client, for a fixed time per client count. Zero fields
// take the documented defaults.
type TransferConfig struct {
	// URLs are root://, roots://, https:// (or http://) URLs, each a file
	// or a directory whose files (not subdirectories) join the pick list.
	URLs     []string
	Clients  []int            // parallel client counts (default 1, 4, 8)
	Duration time.Duration    // per client count (default 20s)
	Options  transfer.Options // CA, certificate checks and token for every URL
	Out      io.Writer        // progress lines (default: discarded)
}

func (c *TransferConfig) applyDefaults() {
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 4, 8}
	}
	if c.Duration <= 0 {
		c.Duration = 20 * time.Second
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *TransferConfig) validate() error {
	if len(c.URLs) == 0 {
		return errors.New("bench transfer: no URL given")
	}
	for _, u := range c.URLs {
		if !transfer.IsRemote(u) {
			return fmt.Errorf("bench transfer: %q is not a %s URL", u, remote.SchemeList())
		}
	}
	for _, n := range c.Clients {
		if n <= 0 {
			return fmt.Errorf("bench transfer: client count %d: want at least 1", n)
		}
	}
	return nil
}

// TransferReport is the whole run.
type TransferReport struct {
	Config TransferConfig
	Files  int   // files in the pick list
	Bytes  int64 // their total size
	Points []TransferPoint
}

// TransferPoint is one client count.
type TransferPoint struct {
	Clients int
	Seconds float64 // the measured window: Config.Duration, or less if cancelled
	Bytes   int64   // bytes whose reads completed inside the window
	// MBps is Bytes ÷ Seconds; P10 and P90 are percentiles of the
	// per-second samples, in 10⁶ B/s.
	MBps, P10, P90 float64
	Files          int // files copied whole inside the window
	Errors         int
	FirstError     string
	Series         []Sample // aggregate MB/s, one sample per second
}

// Transfer runs the benchmark: it lists the URLs once into a pick list,
// then runs each client count for cfg.Duration. On cancellation it
// returns the points done so far with the error.
func Transfer(ctx context.Context, cfg TransferConfig) (*TransferReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	picks, err := listPicks(ctx, cfg.URLs, cfg.Options)
	if err != nil {
		return nil, err
	}
	rep := &TransferReport{Config: cfg, Files: len(picks)}
	for _, p := range picks {
		rep.Bytes += p.size
	}
	fmt.Fprintf(cfg.Out, "bench transfer: %d files, %s, from %d URL(s); %v per point\n", rep.Files, MB(rep.Bytes), len(cfg.URLs), cfg.Duration)
	for _, n := range cfg.Clients {
		p := transferPoint(ctx, &cfg, picks, n)
		rep.Points = append(rep.Points, p)
		fmt.Fprintf(cfg.Out, "  %3d clients: %7.1f MB/s (p10 %.1f, p90 %.1f), %d files, %d errors %s\n",
			n, p.MBps, p.P10, p.P90, p.Files, p.Errors, p.FirstError)
		if err := ctx.Err(); err != nil {
			return rep, fmt.Errorf("bench transfer: %w", err)
		}
	}
	return rep, nil
}

// pointStats is what the clients of one point share.
type pointStats struct {
	bytes, files, errors atomic.Int64
	mu                   sync.Mutex // protects firstErr
	firstErr             string
}

func (s *pointStats) fail(err error) {
	s.errors.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

// transferPoint runs n clients for cfg.Duration while sampling the bytes
// they have read once a second. Only reads that complete inside the
// window count: the clients are cancelled at its end and their
// unfinished reads are dropped.
func transferPoint(ctx context.Context, cfg *TransferConfig, picks []pick, n int) TransferPoint {
	p := TransferPoint{Clients: n}
	var st pointStats
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	seed := uint64(start.UnixNano())
	for i := range n {
		c := &transferClient{opts: cfg.Options, urls: cfg.URLs, picks: picks, stats: &st, rng: rand.New(rand.NewPCG(seed, uint64(i)))}
		wg.Go(func() { c.run(cctx) })
	}
	var last int64
	lastT := start
	for k := 1; ; k++ {
		end := start.Add(min(time.Duration(k)*time.Second, cfg.Duration))
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(end)):
		}
		now, b := time.Now(), st.bytes.Load()
		if secs := now.Sub(lastT).Seconds(); secs > 0 {
			p.Series = append(p.Series, Sample{T: lastT.Sub(start).Seconds(), MBps: float64(b-last) / secs / 1e6})
		}
		last, lastT = b, now
		if ctx.Err() != nil || !end.Before(start.Add(cfg.Duration)) {
			break
		}
	}
	p.Seconds, p.Bytes = lastT.Sub(start).Seconds(), last
	// Files and errors are read before the cancel, which would end the
	// in-flight copies with errors of its own making.
	p.Files, p.Errors = int(st.files.Load()), int(st.errors.Load())
	stop()
	wg.Wait()
	st.mu.Lock()
	p.FirstError = st.firstErr
	st.mu.Unlock()
	if p.Seconds > 0 {
		p.MBps = float64(p.Bytes) / p.Seconds / 1e6
	}
	samples := make([]float64, len(p.Series))
	for i, s := range p.Series {
		samples[i] = s.MBps
	}
	p.P10, p.P90 = percentile(samples, 0.1), percentile(samples, 0.9)
	return p
}

// percentile interpolates linearly between the closest ranks; 0 for no
// samples.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
