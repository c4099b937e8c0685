package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sitebox/internal/sitebench"
	"sitebox/test/peers"
)

// TPCConfig describes the third-party-copy benchmark.
type TPCConfig struct {
	Sitebox  string // path of the sitebox binary to serve with
	WorkDir  string // scratch directory (the files live here)
	FileSize int64  // bytes (default 1 GiB)
	Rounds   int    // repetitions per point; the median is reported (default 3)
	// Baseline, if set, is another sitebox binary run as a third pair
	// ("sitebox-baseline"), for a before/after comparison in one run.
	Baseline string
	// Protos are the transfer kinds to run (tpcKinds; default "root" and
	// "https").
	Protos []string
	// Streams, if set, is the X-Number-Of-Streams of the HTTP-TPC copies
	// (FTS's "nostreams"): both destinations pull over that many
	// connections. root:// TPC has no such request: xrdcp --tpc asks the
	// destination to copy, and it pulls over one connection.
	Streams int
	Out     io.Writer
}

// TPCResult is one measured transfer kind on one pair of servers.
type TPCResult struct {
	Server string // "sitebox" or "xrootd"
	Proto  string // "root" (xrdcp --tpc only) or "https" (HTTP-TPC pull)
	MBps   float64
	// CPUSecs is the CPU both servers (and their copy helpers, xrootd's
	// `xrdcp --server`) spent per copy, median over rounds.
	CPUSecs float64
	// MachineCPUSecs is the CPU the whole machine spent on the copy and
	// on writing its file to disk (a sync after it), median over rounds.
	// A server that starts its own write-back (sitebox's copies do, as
	// they land) pays that in CPUSecs; one leaving it to the kernel's
	// flusher threads does not, so CPUSecs alone favours it.
	MachineCPUSecs float64
}

// tpcPair is two servers of one kind and how a copy between them runs.
type tpcPair struct {
	name  string
	procs []*peers.Process
	root  func(ctx context.Context) error
	https func(ctx context.Context) error
	push  func(ctx context.Context) error
	put   func(ctx context.Context) error
}

// TPC copies one file between two sitebox boxes and between two xrootd
// 5.5 servers (with XrdHttp and its TPC handler), by root:// TPC and by
// HTTP-TPC pull, pairs interleaved round by round. The source file is in
// the page cache; the destination writes to the same disk.
func TPC(ctx context.Context, cfg TPCConfig) ([]TPCResult, error) {
	if err := needBinAndDir("bench tpc", cfg.Sitebox, cfg.WorkDir); err != nil {
		return nil, err
	}
	if cfg.FileSize <= 0 {
		cfg.FileSize = 1 << 30
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if len(cfg.Protos) == 0 {
		cfg.Protos = []string{"root", "https"}
	}
	for _, p := range cfg.Protos {
		if !slices.Contains(tpcKinds, p) {
			return nil, fmt.Errorf("bench tpc: unknown protocol %q (%s)", p, strings.Join(tpcKinds, ", "))
		}
	}
	for _, tool := range []string{"xrdcp", "xrootd", "curl", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("bench tpc needs %s: %w", tool, err)
		}
	}
	env, err := newTPCEnv(ctx, cfg)
	if err != nil {
		env.stop()
		return nil, err
	}
	defer env.stop()
	fmt.Fprintf(cfg.Out, "bench tpc: %d MiB file, %d rounds%s\n", cfg.FileSize>>20, cfg.Rounds, streamsNote(cfg.Streams))

	type key struct{ server, proto string }
	mbps, cpu, machine := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	for r := 0; r < cfg.Rounds; r++ {
		for i := range env.pairs {
			p := env.pairs[(i+r)%len(env.pairs)]
			for _, kind := range []struct {
				proto string
				run   func(context.Context) error
			}{{"root", p.root}, {"https", p.https}, {"push", p.push}, {"put", p.put}} {
				if !slices.Contains(cfg.Protos, kind.proto) {
					continue
				}
				// The previous copy's data (the other pair's, as often
				// as not) goes to the disk first: written back during
				// this copy it slows it, and its page-cache writes cost
				// twice the CPU.
				syscall.Sync()
				before := cpuOf(p.procs)
				machine0, err := sitebench.MachineBusy()
				if err != nil {
					return nil, err
				}
				start := time.Now()
				if err := kind.run(ctx); err != nil {
					return nil, fmt.Errorf("%s %s TPC: %w", p.name, kind.proto, err)
				}
				secs := time.Since(start).Seconds()
				k := key{p.name, kind.proto}
				mbps[k] = append(mbps[k], float64(cfg.FileSize)/secs/1e6)
				cpu[k] = append(cpu[k], (cpuOf(p.procs) - before).Seconds())
				syscall.Sync() // the copy's write-back, whoever started it
				machine1, err := sitebench.MachineBusy()
				if err != nil {
					return nil, err
				}
				machine[k] = append(machine[k], (machine1 - machine0).Seconds())
				fmt.Fprintf(cfg.Out, "  %-16s %-5s round %d: %7.0f MB/s, %5.2f s CPU, machine %5.2f s with write-back, load %s\n", p.name, kind.proto, r+1, mbps[k][r], cpu[k][r], machine[k][r], loadAvg())
			}
		}
	}
	var out []TPCResult
	for _, p := range env.pairs {
		for _, proto := range cfg.Protos {
			k := key{p.name, proto}
			out = append(out, TPCResult{Server: p.name, Proto: proto, MBps: median(mbps[k]), CPUSecs: median(cpu[k]), MachineCPUSecs: median(machine[k])})
		}
	}
	return out, nil
}

// streamsNote says what the HTTP-TPC copies ask for, when they ask.
// tpcKinds are the transfers the benchmark knows: root:// TPC, HTTP-TPC
// pull and push, and a client's https PUT of the file to the
// destination (the upload an HTTP-TPC push makes, without the source).
var tpcKinds = []string{"root", "https", "push", "put"}

var tpcKindLabels = map[string]string{
	"root":  "root:// (xrdcp --tpc only)",
	"https": "HTTP-TPC pull (COPY + Source)",
	"push":  "HTTP-TPC push (COPY + Destination)",
	"put":   "https PUT by curl (an upload)",
}

func streamsNote(streams int) string {
	if streams <= 0 {
		return ""
	}
	return fmt.Sprintf(", HTTP-TPC with X-Number-Of-Streams: %d", streams)
}

// loadAvg is the machine's one-minute load average, printed with each
// round: other work on the machine shows in the figures.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// cpuOf is the CPU the processes and their waited-for children used.
func cpuOf(ps []*peers.Process) time.Duration {
	var total time.Duration
	for _, p := range ps {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			if i < len(f) {
				n, _ := strconv.ParseInt(f[i], 10, 64)
				total += time.Duration(n) * time.Second / 100
			}
		}
	}
	return total
}

// FormatTPC renders results as a Markdown table; streams is what the
// HTTP-TPC copies asked for (TPCConfig.Streams).
func FormatTPC(rs []TPCResult, size int64, streams int) string {
	out := fmt.Sprintf("Third-party copy of a %d MiB file between two servers on one machine (median%s):\n\n", size>>20, streamsNote(streams))
	out += "| protocol | server pair | MB/s | CPU s per copy (both servers) | machine CPU s per copy, write-back included |\n|---|---|---:|---:|---:|\n"
	for _, proto := range tpcKinds {
		for _, r := range rs {
			if r.Proto == proto {
				label := tpcKindLabels[proto]
				out += fmt.Sprintf("| %s | %s | %.0f | %.2f | %.2f |\n", label, r.Server, r.MBps, r.CPUSecs, r.MachineCPUSecs)
			}
		}
	}
	return out
}
