package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The readv mode's workload: what an analysis job reading scattered
// baskets asks of an origin, the analysis mode's reads (vectorReadScript)
// from files on the server's local disk.
const (
	readvFiles     = 8
	readvFileSize  = 64 << 20
	readvThreads   = 4
	readvChunks    = 16
	readvChunkSize = 32 << 10
)

// ReadvResult is one server's result in the readv mode.
type ReadvResult struct {
	Server string
	Rate   float64 // vector reads per second, the median over rounds
	// CPUPerReadv is the server's CPU time (user + system) per vector
	// read, the median over rounds.
	CPUPerReadv time.Duration
	Rates       []float64
	CPUs        []time.Duration
}

// originReadv runs the readv mode: readvThreads threads each issuing
// vector reads of readvChunks × readvChunkSize at random offsets of
// readvFiles files, against each server in turn for cfg.Rounds rounds,
// each round starting with the next server; the server's CPU time is
// read before and after each pass.
func originReadv(ctx context.Context, cfg OriginConfig, data string, servers []setup) ([]ReadvResult, error) {
	names := make([]string, readvFiles)
	for i := range names {
		names[i] = fmt.Sprintf("/readv%02d.dat", i)
		path := filepath.Join(data, names[i])
		if err := makeFile(path, readvFileSize); err != nil {
			return nil, err
		}
		if err := readAll(path); err != nil { // into the page cache
			return nil, err
		}
	}
	fmt.Fprintf(cfg.Out, "bench origin readv: %d threads × %d vector reads of %d × %d KiB over %d files of %d MiB, %d rounds\n",
		readvThreads, cfg.ReadvsPerThread, readvChunks, readvChunkSize>>10, readvFiles, readvFileSize>>20, cfg.Rounds)
	ac := AnalysisConfig{Python: cfg.Python, Threads: readvThreads, Readvs: cfg.ReadvsPerThread, Chunks: readvChunks, ChunkSize: readvChunkSize}
	ac.FileSize, ac.Seed = readvFileSize, 1
	for _, s := range servers { // check both serve; warm their caches
		if _, _, err := readvPass(ctx, &ac, s, names); err != nil {
			return nil, fmt.Errorf("%s: warm-up pass: %w", s.name, err)
		}
	}
	out := make([]ReadvResult, len(servers))
	for i, s := range servers {
		out[i].Server = s.name
	}
	for r := range cfg.Rounds {
		for k := range servers {
			i := (k + r) % len(servers)
			rate, cpu, err := readvPass(ctx, &ac, servers[i], names)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", servers[i].name, err)
			}
			out[i].Rates = append(out[i].Rates, rate)
			out[i].CPUs = append(out[i].CPUs, cpu)
			fmt.Fprintf(cfg.Out, "  %-8s readv round %d: %8.0f readv/s  %6.1f µs server CPU each\n", servers[i].name, r+1, rate, micros(cpu))
		}
	}
	for i := range out {
		out[i].Rate = median(out[i].Rates)
		out[i].CPUPerReadv = medianDuration(out[i].CPUs)
	}
	return out, nil
}

// readvPass runs one pass against s: its rate and the server's CPU time
// per vector read.
func readvPass(ctx context.Context, ac *AnalysisConfig, s setup, names []string) (float64, time.Duration, error) {
	before, err := s.proc.CPUTime()
	if err != nil {
		return 0, 0, err
	}
	r, err := runVectorReads(ctx, ac, "127.0.0.1:"+strconv.Itoa(s.port), names)
	if err != nil {
		return 0, 0, err
	}
	after, err := s.proc.CPUTime()
	if err != nil {
		return 0, 0, err
	}
	per, err := cpuPerOp(before, after, r.Readvs)
	return r.rate(), per, err
}

// cpuPerOp is the CPU time a process spent per operation between two
// readings of its CPU time.
func cpuPerOp(before, after time.Duration, ops int) (time.Duration, error) {
	switch {
	case ops <= 0:
		return 0, fmt.Errorf("%d operations: nothing to charge the CPU time to", ops)
	case after < before:
		return 0, errors.New("the server's CPU time went backwards: did it restart?")
	}
	return (after - before) / time.Duration(ops), nil
}

func medianDuration(ds []time.Duration) time.Duration {
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = float64(d)
	}
	return time.Duration(median(fs))
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// readAll reads a file through, leaving it in the page cache.
func readAll(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}
