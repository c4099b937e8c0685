package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// The uproot workload of the analysis mode: what a columnar analysis
// does to a cache. Each origin file is a ROOT file with one TTree of
// Branches float64 branches (written by uproot.recreate, in baskets of
// basketEntries entries, so the baskets of all branches interleave as in
// a real ntuple); a job opens one with uproot over root://, reads
// ReadBranches of them and closes it. uproot reads the baskets of the
// chosen branches with vector reads: scattered ranges, a few per basket
// cluster, as ROOT's TTreeCache does.

const basketEntries = 10_000

// uprootFileName names a tree file after its shape, so a rerun with the
// same --work-dir reuses it.
func uprootFileName(cfg *AnalysisConfig, i int) string {
	return fmt.Sprintf("uproot-b%d-e%d-%02d.root", cfg.Branches, cfg.Entries, i)
}

// makeUprootFiles writes cfg.Files tree files into data (reusing those
// already there) and returns their names as the origin serves them.
func makeUprootFiles(ctx context.Context, cfg *AnalysisConfig, data string) ([]string, error) {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	var names, missing []string
	for i := range cfg.Files {
		n := uprootFileName(cfg, i)
		names = append(names, "/"+n)
		if _, err := os.Stat(filepath.Join(data, n)); err != nil {
			missing = append(missing, filepath.Join(data, n))
		}
	}
	if len(missing) == 0 {
		return names, nil
	}
	fmt.Fprintf(cfg.Out, "bench cache: writing %d ROOT files of %d branches × %d entries into %s\n", len(missing), cfg.Branches, cfg.Entries, data)
	args := append([]string{"-c", uprootWriteScript, strconv.Itoa(cfg.Branches), strconv.Itoa(cfg.Entries), strconv.Itoa(basketEntries)}, missing...)
	if out, err := exec.CommandContext(ctx, cfg.Python, args...).CombinedOutput(); err != nil {
		for _, m := range missing {
			os.Remove(m)
		}
		return nil, fmt.Errorf("write ROOT files with uproot (%s): %v: %s", cfg.Python, err, trimMsg(out))
	}
	return names, nil
}

// uprootWriteScript: argv branches entries basket_entries paths...;
// uncompressed, so the bytes read are the bytes asked for.
const uprootWriteScript = `
import os, sys, numpy as np, uproot
nb, ne, be = map(int, sys.argv[1:4])
for i, path in enumerate(sys.argv[4:]):
    rng = np.random.default_rng(i)
    tmp = path + ".tmp"
    with uproot.recreate(tmp, compression=None) as f:
        f.mktree("events", {"b%03d" % b: np.float64 for b in range(nb)})
        for start in range(0, ne, be):
            n = min(be, ne - start)
            f["events"].extend({"b%03d" % b: rng.random(n) for b in range(nb)})
    os.rename(tmp, path)
`

// runUprootJobs runs one pass of uproot jobs against host: the same seed
// every pass, so the warm pass reads what the cold one did. A pass's
// rate is in jobs per second.
func runUprootJobs(ctx context.Context, cfg *AnalysisConfig, host string, names []string) (passResult, error) {
	args := []string{"root://" + host + "/", strconv.Itoa(cfg.Threads), strconv.Itoa(cfg.Jobs),
		strconv.Itoa(cfg.ReadBranches), strconv.Itoa(cfg.Branches), strconv.FormatUint(cfg.Seed, 10)}
	return runPass(ctx, cfg, "uproot jobs on "+host, append(append([]string{"-c", uprootReadScript}, args...), names...))
}

// uprootReadScript: argv prefix threads jobs read_branches branches seed
// names...; each job opens prefix+name (a root:// URL, or a path on a
// mount); prints the jobs run ("readvs", the rate's unit), the array
// bytes read and the seconds taken.
const uprootReadScript = uprootJobsPy + runThreadsPy

// uprootJobsPy is uprootReadScript up to the threads' start: the mount
// bench runs it in several processes started together.
const uprootJobsPy = `
import json, random, sys, threading, time, uproot
prefix, threads, jobs, nread, nb, seed = sys.argv[1], *map(int, sys.argv[2:7])
names = sys.argv[7:]
errors, total = [], [0]
lock = threading.Lock()
def worker(t):
    rnd = random.Random(seed * 1000 + t)
    got = 0
    try:
        for _ in range(jobs):
            name = rnd.choice(names)
            branches = ["b%03d" % b for b in rnd.sample(range(nb), nread)]
            with uproot.open(prefix + name, timeout=120) as f:
                arrays = f["events"].arrays(branches, library="np")
                got += sum(a.nbytes for a in arrays.values())
    except Exception as e:
        errors.append("%s: %s" % (type(e).__name__, e)); return
    with lock:
        total[0] += got
units = threads * jobs
`
