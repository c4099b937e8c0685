// Package bench runs sitebox's built-in benchmarks: the same workload
// against sitebox and against the real XRootD peer, side by side in one run,
// so the ratio survives a small, noisy machine.
package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/test/peers"
)

// OriginConfig describes the data-server benchmark.
type OriginConfig struct {
	Sitebox  string // path of the sitebox binary to serve with
	WorkDir  string // scratch directory (the test file lives here)
	FileSize int64  // bytes (default 1 GiB)
	Clients  []int  // parallel xrdcp counts (default 1, 4, 16)
	Rounds   int    // repetitions per point; the median is reported (default 3)
	// Modes are the workloads to run (default all of OriginModes):
	// "plain" is one-stream xrdcp copies by both read paths, "streams"
	// xrdcp -S 4 copies, "readv" vector reads of files on local disk.
	Modes []string
	// Python has the XRootD bindings the readv mode reads with (default
	// $SITEBOX_PYTHON, else python3).
	Python string
	// ReadvsPerThread is how many vector reads each of the readv mode's
	// threads issues per pass (default 1000: about a second, long enough
	// for the servers' CPU times, counted in 10 ms ticks, to be close).
	ReadvsPerThread int
	Out             io.Writer
}

// OriginModes are the workloads of the origin bench, in the order run.
var OriginModes = []string{"plain", "streams", "readv"}

// ParseOriginModes checks a list of modes (--modes), keeping the order
// of OriginModes and dropping repeats; empty means all of them.
func ParseOriginModes(modes []string) ([]string, error) {
	if len(modes) == 0 {
		return slices.Clone(OriginModes), nil
	}
	for _, m := range modes {
		if !slices.Contains(OriginModes, m) {
			return nil, fmt.Errorf("mode %q: want any of %s", m, strings.Join(OriginModes, ", "))
		}
	}
	var out []string
	for _, m := range OriginModes {
		if slices.Contains(modes, m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// OriginReport is the run: the copy modes' points and the readv mode's.
type OriginReport struct {
	Copies []OriginResult
	Readv  []ReadvResult
}

// OriginResult is one measured point of a copy mode.
type OriginResult struct {
	Server  string // a setup's name: "sitebox", "xrootd/read", "sitebox/streams"...
	Clients int
	MBps    float64 // aggregate, median over rounds
	Runs    []float64
	RSSMiB  float64 // server's peak resident memory over the whole run
}

// Origin runs the modes cfg asks for against a sitebox origin and a real
// xrootd data server on the same machine serving the same files, servers
// interleaved round by round so drifting machine load hits both alike.
// Files are read from the page cache (each is read once before timing),
// so the figures measure the servers, not the disk.
func Origin(ctx context.Context, cfg OriginConfig) (*OriginReport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	copies := slices.Contains(cfg.Modes, "plain") || slices.Contains(cfg.Modes, "streams")
	readv := slices.Contains(cfg.Modes, "readv")
	if _, err := exec.LookPath("xrdcp"); err != nil && copies {
		return nil, fmt.Errorf("bench origin needs xrdcp (Debian package xrootd-client): %w", err)
	}
	if readv {
		if out, err := exec.Command(cfg.Python, "-c", "import XRootD.client").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("the readv mode needs Python with the XRootD bindings (python3-xrootd, or pip install xrootd; --python); %s: %v: %s", cfg.Python, err, trimMsg(out))
		}
	}
	data := filepath.Join(cfg.WorkDir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if copies {
		if err := makeFile(filepath.Join(data, "bench.dat"), cfg.FileSize); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.Out, "bench origin: %d MiB file, clients %v, %d rounds\n", cfg.FileSize>>20, cfg.Clients, cfg.Rounds)
	}
	servers, stop, err := startOriginServers(ctx, cfg, data)
	if err != nil {
		return nil, err
	}
	defer stop()
	rep := &OriginReport{}
	if copies {
		if rep.Copies, err = originCopies(ctx, cfg, servers); err != nil {
			return nil, err
		}
	}
	if readv {
		if rep.Readv, err = originReadv(ctx, cfg, data, servers); err != nil {
			return nil, err
		}
	}
	for i := range rep.Copies {
		for _, s := range servers {
			if strings.HasPrefix(rep.Copies[i].Server+"/", s.name+"/") {
				if rss, err := s.proc.PeakRSS(); err == nil {
					rep.Copies[i].RSSMiB = float64(rss) / (1 << 20)
				}
			}
		}
	}
	return rep, nil
}

// originCopies runs the copy modes: every client count, each setup of
// the modes asked for.
func originCopies(ctx context.Context, cfg OriginConfig, servers []setup) ([]OriginResult, error) {
	setups := copySetups(servers, cfg.Modes)
	for _, s := range servers { // warm the page cache and check both serve
		if _, err := copyN(ctx, xrdcpArgs(benchURL(s.port)), 1, nil); err != nil {
			return nil, fmt.Errorf("%s: warm-up read failed: %w", s.name, err)
		}
	}
	var results []OriginResult
	for _, n := range cfg.Clients {
		rs, err := originRounds(ctx, cfg, setups, n)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	return results, nil
}

func (cfg *OriginConfig) defaults() error {
	modes, err := ParseOriginModes(cfg.Modes)
	if err != nil {
		return err
	}
	cfg.Modes = modes
	if cfg.Python == "" {
		cfg.Python = defaultPython()
	}
	if cfg.ReadvsPerThread <= 0 {
		cfg.ReadvsPerThread = 1000
	}
	if cfg.FileSize <= 0 {
		cfg.FileSize = 1 << 30
	}
	if len(cfg.Clients) == 0 {
		cfg.Clients = []int{1, 4, 16}
	}
	if cfg.Rounds <= 0 {
		cfg.Rounds = 3
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	return nil
}

func benchURL(port int) string { return fmt.Sprintf("root://127.0.0.1:%d//bench.dat", port) }

// startOriginServers starts a real xrootd and a sitebox origin over the
// same data: the two servers, sitebox first, as setups of xrdcp's
// default read path.
func startOriginServers(ctx context.Context, cfg OriginConfig, data string) ([]setup, func(), error) {
	xport, err := peers.FreePort()
	if err != nil {
		return nil, nil, err
	}
	xrd, err := peers.StartXrootd(ctx, peers.XrootdConfig{DataDir: data, Port: xport, Name: "benchorigin", WorkDir: filepath.Join(cfg.WorkDir, "xrootd")})
	if err != nil {
		return nil, nil, fmt.Errorf("start xrootd: %w", err)
	}
	sport, err := peers.FreePort()
	if err != nil {
		xrd.Stop()
		return nil, nil, err
	}
	sb, err := peers.StartSitebox(ctx, cfg.Sitebox, []int{sport}, "serve", "--export", "/="+data,
		"--root-addr", "127.0.0.1:"+strconv.Itoa(sport), "--https-addr", "off", "--log-level", "warn",
		"--state-dir", filepath.Join(cfg.WorkDir, "state"))
	if err != nil {
		xrd.Stop()
		return nil, nil, fmt.Errorf("start sitebox: %w", err)
	}
	servers := []setup{{name: "sitebox", port: sport, proc: sb}, {name: "xrootd", port: xport, proc: xrd}}
	return servers, func() { sb.Stop(); xrd.Stop() }, nil
}

// copySetups are the ways the copy modes read from each server: the
// "plain" mode xrdcp's default (pgread with a CRC32C per page when the
// server offers it) and plain kXR_read (XRD_CPUSEPGWRTRD=0), so the table
// shows both paths; the "streams" mode xrdcp -S 4, its default path over
// four data streams.
func copySetups(servers []setup, modes []string) []setup {
	var out []setup
	if slices.Contains(modes, "plain") {
		out = append(out, servers...)
		for _, s := range servers {
			out = append(out, setup{name: s.name + "/read", port: s.port, proc: s.proc, env: []string{"XRD_CPUSEPGWRTRD=0"}})
		}
	}
	if slices.Contains(modes, "streams") {
		for _, s := range servers {
			out = append(out, setup{name: s.name + "/streams", port: s.port, proc: s.proc, args: []string{"-S", strconv.Itoa(copyStreams)}})
		}
	}
	return out
}

// copyStreams is the number of extra data streams of the streams mode.
const copyStreams = 4

// originRounds measures every setup with n parallel clients, the rounds
// rotating which setup goes first, and reports each setup's median.
func originRounds(ctx context.Context, cfg OriginConfig, setups []setup, n int) ([]OriginResult, error) {
	runs := map[string][]float64{}
	for r := 0; r < cfg.Rounds; r++ {
		for i := range setups {
			s := setups[(i+r)%len(setups)]
			secs, err := copyN(ctx, s.xrdcp(), n, s.env)
			if err != nil {
				return nil, fmt.Errorf("%s with %d clients: %w", s.name, n, err)
			}
			mbps := float64(cfg.FileSize) * float64(n) / secs / 1e6
			runs[s.name] = append(runs[s.name], mbps)
			fmt.Fprintf(cfg.Out, "  %-15s clients=%-2d round %d: %8.0f MB/s\n", s.name, n, r+1, mbps)
		}
	}
	var out []OriginResult
	for _, s := range setups {
		out = append(out, OriginResult{Server: s.name, Clients: n, MBps: median(runs[s.name]), Runs: runs[s.name]})
	}
	return out, nil
}

type setup struct {
	name string
	port int
	proc *peers.Process
	env  []string // extra client environment
	args []string // extra xrdcp options
}

// xrdcp is the command line of one copy of the bench file from s.
func (s setup) xrdcp() []string {
	argv := xrdcpArgs(benchURL(s.port))
	return append(append(argv[:1:1], s.args...), argv[1:]...)
}

// copyN runs n copies (argv, an xrdcp to /dev/null) at once and returns
// the wall time of the slowest.
func copyN(ctx context.Context, argv []string, n int, env []string) (float64, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := clientCmd(ctx, argv, env).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return time.Since(start).Seconds(), nil
}

// xrdcpArgs copies url to /dev/null, the read every xrdcp benchmark times.
func xrdcpArgs(url string) []string { return []string{"xrdcp", "-f", "-s", url, "/dev/null"} }

// clientCmd runs a client with the XRootD timeouts of every benchmark (a
// stalled server must fail the copy, not hang the run for minutes); env
// comes last, and later entries win in exec, so the caller's own XRD_*
// cannot switch a row to another read path.
func clientCmd(ctx context.Context, argv, env []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), "XRD_REQUESTTIMEOUT=60", "XRD_CONNECTIONRETRY=1"), env...)
	return cmd
}

// makeFile writes size random bytes, reusing an existing file of that size.
func makeFile(path string, size int64) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() == size {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}
