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
	"sort"
	"strconv"
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
	Out      io.Writer
}

// OriginResult is one measured point.
type OriginResult struct {
	Server  string // "sitebox" or "xrootd"
	Clients int
	MBps    float64 // aggregate, median over rounds
	Runs    []float64
	RSSMiB  float64 // server's peak resident memory over the whole run
}

// Origin reads the same file with N parallel xrdcp clients from a sitebox
// origin and from a real xrootd data server on the same machine, servers
// interleaved round by round so drifting machine load hits both alike. The
// file is read from the page cache (it is read once before timing), so the
// figures measure the servers, not the disk.
func Origin(ctx context.Context, cfg OriginConfig) ([]OriginResult, error) {
	cfg.defaults()
	if _, err := exec.LookPath("xrdcp"); err != nil {
		return nil, fmt.Errorf("bench origin needs xrdcp (Debian package xrootd-client): %w", err)
	}
	data := filepath.Join(cfg.WorkDir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	if err := makeFile(filepath.Join(data, "bench.dat"), cfg.FileSize); err != nil {
		return nil, err
	}
	fmt.Fprintf(cfg.Out, "bench origin: %d MiB file, clients %v, %d rounds\n", cfg.FileSize>>20, cfg.Clients, cfg.Rounds)
	setups, stop, err := startOriginServers(ctx, cfg, data)
	if err != nil {
		return nil, err
	}
	defer stop()
	for _, s := range setups[:2] { // warm the page cache and check both serve
		if _, err := copyN(ctx, benchURL(s.port), 1, nil); err != nil {
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
	for i := range results {
		for _, s := range setups {
			if s.name == results[i].Server {
				if rss, err := s.proc.PeakRSS(); err == nil {
					results[i].RSSMiB = float64(rss) / (1 << 20)
				}
			}
		}
	}
	return results, nil
}

func (cfg *OriginConfig) defaults() {
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
}

func benchURL(port int) string { return fmt.Sprintf("root://127.0.0.1:%d//bench.dat", port) }

// startOriginServers starts a real xrootd and a sitebox origin over the
// same data. Each setup is a server plus how xrdcp reads from it: its
// default (pgread with a CRC32C per page when the server offers it) and
// plain kXR_read (XRD_CPUSEPGWRTRD=0), so the table shows both paths.
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
	setups := []setup{
		{name: "sitebox", port: sport, proc: sb},
		{name: "xrootd", port: xport, proc: xrd},
		{name: "sitebox/read", port: sport, proc: sb, env: []string{"XRD_CPUSEPGWRTRD=0"}},
		{name: "xrootd/read", port: xport, proc: xrd, env: []string{"XRD_CPUSEPGWRTRD=0"}},
	}
	return setups, func() { sb.Stop(); xrd.Stop() }, nil
}

// originRounds measures every setup with n parallel clients, the rounds
// rotating which setup goes first, and reports each setup's median.
func originRounds(ctx context.Context, cfg OriginConfig, setups []setup, n int) ([]OriginResult, error) {
	runs := map[string][]float64{}
	for r := 0; r < cfg.Rounds; r++ {
		for i := range setups {
			s := setups[(i+r)%len(setups)]
			secs, err := copyN(ctx, benchURL(s.port), n, s.env)
			if err != nil {
				return nil, fmt.Errorf("%s with %d clients: %w", s.name, n, err)
			}
			mbps := float64(cfg.FileSize) * float64(n) / secs / 1e6
			runs[s.name] = append(runs[s.name], mbps)
			fmt.Fprintf(cfg.Out, "  %-12s clients=%-2d round %d: %8.0f MB/s\n", s.name, n, r+1, mbps)
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
}

// copyN runs n xrdcp copies of url to /dev/null at once and returns the wall
// time of the slowest.
func copyN(ctx context.Context, url string, n int, env []string) (float64, error) {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := clientCmd(ctx, xrdcpArgs(url), env).CombinedOutput(); err != nil {
				errs <- fmt.Errorf("xrdcp %s: %v: %s", url, err, out)
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

// FormatOrigin renders results as a Markdown table: sitebox against xrootd
// per client count and read path, with the ratio.
func FormatOrigin(rs []OriginResult) string {
	get := func(server string, n int) OriginResult {
		for _, r := range rs {
			if r.Server == server && r.Clients == n {
				return r
			}
		}
		return OriginResult{}
	}
	var ns []int
	for _, r := range rs {
		if r.Server == "sitebox" {
			ns = append(ns, r.Clients)
		}
	}
	if len(ns) == 0 {
		return "no results\n"
	}
	out := "| clients | xrdcp read path | sitebox MB/s | xrootd MB/s | sitebox ÷ xrootd |\n|---:|---|---:|---:|---:|\n"
	for _, n := range ns {
		for _, path := range []struct{ label, suffix string }{{"default (pgread)", ""}, {"plain read", "/read"}} {
			s, x := get("sitebox"+path.suffix, n), get("xrootd"+path.suffix, n)
			ratio := 0.0
			if x.MBps > 0 {
				ratio = s.MBps / x.MBps
			}
			out += fmt.Sprintf("| %d | %s | %.0f | %.0f | %.2f× |\n", n, path.label, s.MBps, x.MBps, ratio)
		}
	}
	s, x := get("sitebox", ns[len(ns)-1]), get("xrootd", ns[len(ns)-1])
	out += fmt.Sprintf("\nPeak server RSS over the run: sitebox %.0f MiB, xrootd %.0f MiB.\n", s.RSSMiB, x.RSSMiB)
	return out
}
