package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
)

// AnalysisConfig is the analysis mode of the cache bench: what an
// analysis job does to a cache — ROOT or uproot reading scattered
// baskets with vector reads — rather than whole-file copies. Every
// thread issues Readvs vector reads of Chunks × ChunkSize at random
// offsets of random files, through the XRootD Python bindings as a user
// would. A pass runs the same reads against an empty cache (cold), then
// again (warm). Zero fields take the documented defaults; the link and
// the caches are set up as in the streaming mode (CacheConfig: Files
// default 8, FileSize 64 MiB here).
type AnalysisConfig struct {
	CacheConfig
	Python    string // with the XRootD bindings (default $SITEBOX_PYTHON, else python3)
	Chunks    int    // chunks per vector read (default 16)
	ChunkSize int64  // bytes per chunk (default 32 KiB)
	Threads   int    // parallel readers (default 4)
	Readvs    int    // vector reads per thread and pass (default 100)
	// WarmPasses is how many times the warm pass runs (default 3); the
	// warm rate is the median of the passes'. One warm pass of the
	// defaults lasts about a tenth of a second, and on a small shared
	// machine one setup's passes range over a factor of two in a run:
	// the median is not moved by a pass that met a burst of other work.
	WarmPasses int
	// ColdPasses is how many times each setup is read cold (default 3),
	// each time by a fresh server with an empty cache, in rounds that
	// take turns at going first; the cold rate is the median. A cold pass
	// lasts seconds, and one of them alone moved by 10 % from run to run.
	ColdPasses int
	// ReaderCPUs are the CPUs the readers run on, the rest of the bench
	// on the others (see cpuPlan): "auto" (the default: the last quarter
	// of the CPUs, when there are four or more), "none" (everything
	// shares every CPU), or a Linux CPU list such as "1" or "2-3".
	ReaderCPUs string

	// Workload is "readv" (the default: random vector reads as above) or
	// "uproot": each reader runs Jobs (default 5) jobs per pass, each
	// opening one of Files ROOT files (default 2) with uproot and reading
	// ReadBranches (default 4) of its TTree's Branches (default 200)
	// float64 branches of Entries (default 100,000) entries; rates are
	// then jobs per second.
	Workload     string
	Branches     int
	ReadBranches int
	Entries      int
	Jobs         int

	cpus cpuPlan // set by CacheAnalysis from ReaderCPUs
}

func (c *AnalysisConfig) uproot() bool { return c.Workload == "uproot" }

// AnalysisPoint is one setup's result.
type AnalysisPoint struct {
	Setup              string
	Cold, Warm         float64 // vector reads per second, the passes' medians
	WarmMin, WarmMax   float64 // the slowest and fastest warm pass
	ColdMin, ColdMax   float64 // the slowest and fastest cold pass
	AskedBytes         int64   // bytes the clients asked for in the cold pass
	UpstreamBytes      int64   // bytes over the upstream link in the cold pass
	PeakRSS            int64   // the server's own memory (peers.OwnRSS), sampled
	Err                string
	ColdSecs, WarmSecs float64
}

// AnalysisReport is the run: the settings and one point per setup.
type AnalysisReport struct {
	Config AnalysisConfig
	Points []AnalysisPoint
	// Congestion is the host's TCP congestion control (see LinkCongestion).
	Congestion string
	// CPUs says where the readers and the servers ran (cpuPlan.describe).
	CPUs string
}

func (c *AnalysisConfig) applyDefaults() {
	if c.Workload == "" {
		c.Workload = "readv"
	}
	if c.Files <= 0 {
		c.Files = 8
		if c.uproot() {
			c.Files = 2
		}
	}
	if c.Branches <= 0 {
		c.Branches = 200
	}
	if c.ReadBranches <= 0 {
		c.ReadBranches = 4
	}
	if c.Entries <= 0 {
		c.Entries = 100_000
	}
	if c.Jobs <= 0 {
		c.Jobs = 5
	}
	if c.FileSize <= 0 {
		c.FileSize = 64 << 20
	}
	if len(c.Setups) == 0 {
		c.Setups = []string{"direct", "sitebox", "xcache", "local"}
	}
	c.CacheConfig.applyDefaults()
	if c.Python == "" {
		c.Python = defaultPython()
	}
	if c.Chunks <= 0 {
		c.Chunks = 16
	}
	if c.ChunkSize <= 0 {
		c.ChunkSize = 32 << 10
	}
	if c.Threads <= 0 {
		c.Threads = 4
	}
	if c.Readvs <= 0 {
		c.Readvs = 100
	}
	if c.WarmPasses <= 0 {
		c.WarmPasses = 3
	}
	if c.ColdPasses <= 0 {
		c.ColdPasses = 3
	}
}

func (c *AnalysisConfig) validate() error {
	var stream []string
	for _, s := range c.Setups {
		if s != "local" {
			stream = append(stream, s)
		}
	}
	cc := c.CacheConfig
	cc.Setups = stream
	if err := cc.validate(); err != nil {
		return err
	}
	switch {
	case c.Workload != "readv" && c.Workload != "uproot":
		return fmt.Errorf("workload %q: want readv or uproot", c.Workload)
	case c.ReadBranches > c.Branches:
		return fmt.Errorf("%d branches to read of %d", c.ReadBranches, c.Branches)
	case c.Chunks > 1024:
		return fmt.Errorf("%d chunks per vector read: XRootD allows at most 1024", c.Chunks)
	case c.ChunkSize > c.FileSize:
		return fmt.Errorf("chunk size %d is larger than the files (%d)", c.ChunkSize, c.FileSize)
	}
	if out, err := exec.Command(c.Python, "-c", "import XRootD.client").CombinedOutput(); err != nil {
		return fmt.Errorf("the analysis mode needs Python with the XRootD bindings (python3-xrootd, or pip install xrootd); %s: %v: %s", c.Python, err, trimMsg(out))
	}
	if !c.uproot() {
		return nil
	}
	if out, err := exec.Command(c.Python, "-c", "import uproot, numpy").CombinedOutput(); err != nil {
		return fmt.Errorf("the uproot workload needs Python with uproot and numpy (pip install uproot); %s: %v: %s", c.Python, err, trimMsg(out))
	}
	return nil
}

// CacheAnalysis runs the analysis mode: direct to the origin over the
// shaped link, through each cache, and ("local") from a sitebox origin
// serving the same files from local disk, the ceiling for a warm cache.
func CacheAnalysis(ctx context.Context, cfg AnalysisConfig) (*AnalysisReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	restore, err := cfg.placeReaders()
	if err != nil {
		return nil, err
	}
	defer restore()
	wan := cfg.CacheConfig
	var trees []string
	if cfg.uproot() {
		var err error
		if trees, err = makeUprootFiles(ctx, &cfg, filepath.Join(cfg.WorkDir, "origin-data")); err != nil {
			return nil, err
		}
		wan.Files = 0 // the trees are the origin's files
	}
	env, stop, err := startWAN(ctx, &wan, "ana%02d.root")
	if err != nil {
		return nil, err
	}
	defer stop()
	if cfg.uproot() {
		env.names = trees
	}
	rep := &AnalysisReport{Config: cfg, Congestion: LinkCongestion(), CPUs: cfg.cpus.describe()}
	runs := make([]*analysisRun, 0, len(cfg.Setups))
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()
	colds := coldRounds(ctx, env, &cfg)
	// Every setup's server is started and read cold in turn, then kept
	// running while the warm passes take turns: a warm pass lasts about
	// a tenth of a second, and this machine's speed drifts by more than
	// the differences measured over the minutes one setup after another
	// would take. Each round starts with the next setup, so none always
	// runs first.
	for k, s := range cfg.Setups {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r := startAnalysisRun(ctx, env, &cfg, s)
		r.addColds(colds[k])
		runs = append(runs, r)
	}
	for i := range cfg.WarmPasses {
		for j := range runs {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			runs[(i+j)%len(runs)].warmPass(ctx, &cfg, env)
		}
	}
	for _, r := range runs {
		p := r.finish(ctx, &cfg)
		rep.Points = append(rep.Points, p)
		if p.Err != "" {
			fmt.Fprintf(cfg.Out, "  %-7s FAILED: %s\n", p.Setup, p.Err)
			continue
		}
		fmt.Fprintf(cfg.Out, "  %-7s cold %8.1f %s (passes %.1f–%.1f)  warm %8.1f %s (passes %.1f–%.1f)  upstream÷asked %.2f  RSS %s\n",
			p.Setup, p.Cold, cfg.unit(), p.ColdMin, p.ColdMax, p.Warm, cfg.unit(), p.WarmMin, p.WarmMax, bytesRatio(p.UpstreamBytes, p.AskedBytes), rssText(p.PeakRSS))
	}
	return rep, nil
}

// passResult is what the reader script prints.
type passResult struct {
	Readvs  int     `json:"readvs"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	CPUs    []int   `json:"cpus"` // the CPUs the reader could run on
}

func (r passResult) rate() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Readvs) / r.Seconds
}

// runVectorReads runs one pass of the reader script against host: the
// same seed every pass, so the warm pass asks for what the cold one did.
func runVectorReads(ctx context.Context, cfg *AnalysisConfig, host string, names []string) (passResult, error) {
	args := []string{host, strconv.Itoa(cfg.Threads), strconv.Itoa(cfg.Readvs),
		strconv.Itoa(cfg.Chunks), strconv.FormatInt(cfg.ChunkSize, 10), strconv.FormatInt(cfg.FileSize, 10),
		strconv.FormatUint(cfg.Seed, 10)}
	return runPass(ctx, cfg, "vector reads from "+host, append(append([]string{"-c", vectorReadScript}, args...), names...))
}

// placeReaders splits the CPUs between the readers and the rest as
// cfg.ReaderCPUs asks, moving this process (and so the servers and the
// link it starts) off the readers' CPUs until restore.
func (c *AnalysisConfig) placeReaders() (restore func(), err error) {
	avail, err := availableCPUs()
	if err != nil {
		return nil, err
	}
	if c.cpus, err = planFor(c.ReaderCPUs, avail); err != nil || !c.cpus.pinned() {
		return func() {}, err
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return nil, fmt.Errorf("running the readers on CPUs of their own needs taskset (util-linux), or --reader-cpus none: %w", err)
	}
	return pinProcess(c.cpus.rest)
}

// runPass runs one pass of a Python reader (args: -c script ...), on the
// readers' CPUs, which prints its passResult as JSON; what names the pass
// in errors.
func runPass(ctx context.Context, cfg *AnalysisConfig, what string, args []string) (passResult, error) {
	name := cfg.Python
	if cfg.cpus.pinned() {
		name, args = "taskset", append([]string{"-c", cpuList(cfg.cpus.readers), cfg.Python}, args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=120", "XRD_CONNECTIONRETRY=1")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = trimMsg(ee.Stderr)
		}
		return passResult{}, fmt.Errorf("%s: %v: %s", what, err, msg)
	}
	var r passResult
	if err := json.Unmarshal(out, &r); err != nil {
		return passResult{}, fmt.Errorf("%s: output %q: %v", what, trimMsg(out), err)
	}
	if cfg.cpus.pinned() && !slices.Equal(r.CPUs, cfg.cpus.readers) {
		return passResult{}, fmt.Errorf("%s: the readers ran on CPUs %v, not %v", what, r.CPUs, cfg.cpus.readers)
	}
	return r, nil
}

// vectorReadScript: argv host threads readvs chunks chunk_size file_size
// seed names...; each thread opens every file once, then issues its
// vector reads at random chunk-aligned offsets of random files.
const vectorReadScript = `
import json, random, sys, threading, time
from XRootD import client
host, threads, readvs, chunks, csize, fsize, seed = sys.argv[1], *map(int, sys.argv[2:8])
names = sys.argv[8:]
errors, total = [], [0]
lock = threading.Lock()
def worker(t):
    rnd = random.Random(seed * 1000 + t)
    files = []
    for n in names:
        f = client.File()
        st, _ = f.open("root://%s/%s" % (host, n))
        if not st.ok:
            errors.append("open %s: %s" % (n, st.message)); return
        files.append(f)
    got = 0
    for _ in range(readvs):
        f = rnd.choice(files)
        offs = sorted(rnd.sample(range(fsize // csize), chunks))
        st, res = f.vector_read([(o * csize, csize) for o in offs])
        if not st.ok:
            errors.append("readv: %s" % st.message); return
        got += sum(len(c.buffer) for c in res.chunks)
    for f in files:
        f.close()
    with lock:
        total[0] += got
units = threads * readvs
` + runThreadsPy

// runThreadsPy ends a reader script: it runs worker(t) on every thread
// and prints the pass's passResult — units done (the "readvs" of the
// rate), bytes read, seconds, its CPUs — or the first error, and fails.
const runThreadsPy = `
import os
ts = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
start = time.monotonic()
for t in ts: t.start()
for t in ts: t.join()
took = time.monotonic() - start
if errors:
    sys.stderr.write(errors[0] + "\n"); sys.exit(1)
print(json.dumps({"readvs": units, "bytes": total[0], "seconds": took, "cpus": sorted(os.sched_getaffinity(0))}))
`
