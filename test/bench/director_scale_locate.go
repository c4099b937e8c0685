package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"sitebox/internal/xrootd/proto"
)

// warmRounds is how many times each file is opened again once located.
const warmRounds = 25

// locateBudget bounds one locate, waits included.
const locateBudget = 30 * time.Second

// firstSearch locates a file no server holds, the director's first
// search: it connects to every server. Later searches reuse those
// connections, so the locate figures do not include them.
func firstSearch(ctx context.Context, addr string) (time.Duration, error) {
	c, err := dialLoad(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	lat, _, err := locateOnce(ctx, c, scalePrefix+"/missing/first", true)
	return lat, err
}

// measureLocate opens files of the class held by n servers (holders of
// them exist: min(n, servers)), first each once (the director searches),
// then warmRounds times more (answered from what it found), on one
// connection.
// cpu (nil: not measured) is the director's CPU time, read around the
// first opens.
func measureLocate(ctx context.Context, addr string, n, holders, files int, cpu func() (time.Duration, error)) ScaleLocate {
	l := ScaleLocate{Holders: holders}
	c, err := dialLoad(ctx, addr)
	if err != nil {
		l.Err = err.Error()
		return l
	}
	defer c.Close()
	paths := make([]string, files)
	for k := range paths {
		paths[k] = scalePath(n, k)
	}
	var cold, warm []time.Duration
	var cpu0 time.Duration
	cpuErr := errors.New("not measured")
	if cpu != nil {
		cpu0, cpuErr = cpu()
	}
	for _, p := range paths {
		lat, waits, err := locateOnce(ctx, c, p, n == 0)
		if err != nil {
			l.Err = err.Error()
			return l
		}
		cold = append(cold, lat)
		l.Waits += waits
	}
	if cpuErr == nil {
		if cpu1, err := cpu(); err == nil {
			l.ColdCPU = (cpu1 - cpu0) / time.Duration(len(paths))
		}
	}
	for range warmRounds {
		for _, p := range paths {
			lat, waits, err := locateOnce(ctx, c, p, n == 0)
			if err != nil {
				l.Err = err.Error()
				return l
			}
			warm = append(warm, lat)
			l.Waits += waits
		}
	}
	l.ColdP50, l.ColdP99 = quantiles(cold)
	l.WarmP50, l.WarmP99 = quantiles(warm)
	return l
}

func quantiles(lats []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(lats)
	r := loadResult{Latencies: lats}
	return r.Quantile(0.50), r.Quantile(0.99)
}

// locateOnce opens path for reading until the director answers with a
// redirect (or, when missing, with kXR_NotFound), honouring kXR_wait. It
// returns the time from the first request to that answer.
func locateOnce(ctx context.Context, c *loadConn, path string, missing bool) (time.Duration, int, error) {
	var body [16]byte
	binary.BigEndian.PutUint16(body[2:4], proto.OpenRead)
	t0 := time.Now()
	for waits := 0; ; waits++ {
		st, ans, err := c.roundTrip(proto.ReqOpen, body, []byte(path))
		if err != nil {
			return 0, waits, err
		}
		switch {
		case st == proto.StatusRedirect && !missing:
			return time.Since(t0), waits, nil
		case st == proto.StatusError && missing && len(ans) >= 4 && int32(binary.BigEndian.Uint32(ans[:4])) == proto.ErrNotFound:
			return time.Since(t0), waits, nil
		case st == proto.StatusWait && time.Since(t0) < locateBudget:
			select {
			case <-time.After(waitOf(ans)):
			case <-ctx.Done():
				return 0, waits, ctx.Err()
			}
		default:
			return 0, waits, fmt.Errorf("open %s: %w", path, answerError(st, ans))
		}
	}
}

func locateLine(l ScaleLocate) string {
	what := fmt.Sprintf("held by %d", l.Holders)
	if l.Holders == 0 {
		what = "missing"
	}
	if l.Err != "" {
		return fmt.Sprintf("  locate %-12s FAILED: %s", what, l.Err)
	}
	return fmt.Sprintf("  locate %-12s first p50 %s p99 %s (waits %d, director CPU %s each)  again p50 %s p99 %s",
		what, latText(l.ColdP50), latText(l.ColdP99), l.Waits, latText(l.ColdCPU), latText(l.WarmP50), latText(l.WarmP99))
}
