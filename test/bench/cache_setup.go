package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sitebox/internal/sitebench"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/admin"
	"sitebox/test/peers"
)

// target is what the clients of one point read from.
type target struct {
	host string         // host:port in the clients' root:// URLs
	proc *peers.Process // the cache process; nil for direct
	// hitRatio, if set, asks the cache itself for its byte hit ratio.
	hitRatio func(context.Context) (float64, error)
	// diagnose, if set, describes what the cache did (bypassed bytes,
	// dropped writes, ...) for the progress log.
	diagnose func(context.Context) string
}

// startTarget starts setup with an empty cache in dir, its upstream being
// the relay at upstream.
func (e *cacheEnv) startTarget(ctx context.Context, setup, upstream, dir string) (*target, error) {
	switch setup {
	case "direct":
		return &target{host: upstream}, nil
	case "xcache":
		return e.startXcache(ctx, upstream, dir)
	case "sitebox":
		return e.startSitebox(ctx, upstream, dir)
	}
	return nil, fmt.Errorf("unknown setup %q", setup)
}

func (e *cacheEnv) startXcache(ctx context.Context, upstream, dir string) (*target, error) {
	port, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	p, err := peers.StartXcache(ctx, peers.XcacheConfig{
		Origin: upstream, Port: port, Name: "benchxcache",
		WorkDir: filepath.Join(dir, "xcache"), CacheDir: filepath.Join(dir, "data"),
		RAM: e.cfg.RAM, BlockSize: e.cfg.XcacheBlockSize, Prefetch: e.cfg.XcachePrefetch,
		DiskLow: float64(e.cfg.Disk) * 0.8, DiskHigh: float64(e.cfg.Disk),
	})
	if err != nil {
		return nil, fmt.Errorf("start xcache: %w", err)
	}
	return &target{host: "127.0.0.1:" + strconv.Itoa(port), proc: p}, nil
}

// startSitebox runs `sitebox serve` with only the cache role, from a
// config file: the watermarks have no flags, and a file is checked on its
// own before flags apply, so it must name the route too.
func (e *cacheEnv) startSitebox(ctx context.Context, upstream, dir string) (*target, error) {
	bin := e.cfg.Sitebox
	if bin == "" {
		return nil, fmt.Errorf("no sitebox binary given")
	}
	if help, err := exec.CommandContext(ctx, bin, "serve", "--help").CombinedOutput(); err != nil || !strings.Contains(string(help), "--cache-dir") {
		return nil, fmt.Errorf("%s has no cache role yet (no `serve --cache-dir` flag): build a sitebox with it, or leave out the sitebox setup", bin)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	ports := []int{port}
	metricsAddr, metricsURL := "off", ""
	if e.cfg.MetricsPath != "" {
		mport, err := peers.FreePort()
		if err != nil {
			return nil, err
		}
		metricsAddr = "127.0.0.1:" + strconv.Itoa(mport)
		ports = append(ports, mport)
		metricsURL = "http://" + metricsAddr + e.cfg.MetricsPath
	}
	cfgText := fmt.Sprintf(`[server]
state_dir = %q
log_level = "warn"
metrics_addr = %q

[root]
addr = "127.0.0.1:%d"

[https]
addr = "off"

[cache]
dir = %q
ram = "%d"
high_water = "%d"
low_water = "%d"
%s

[[cache.route]]
prefix = "/"
upstreams = ["root://%s"]
`, filepath.Join(dir, "state"), metricsAddr, port, filepath.Join(dir, "data"), e.cfg.RAM, e.cfg.Disk, e.cfg.Disk*8/10, blockSizeLine(e.cfg.BlockSize), upstream)
	p, err := startConfigBox(ctx, bin, filepath.Join(dir, "sitebox.toml"), cfgText, false, ports)
	if err != nil {
		return nil, fmt.Errorf("start sitebox cache: %w", err)
	}
	t := &target{host: "127.0.0.1:" + strconv.Itoa(port), proc: p}
	t.diagnose = siteboxDiagnosis(filepath.Join(dir, "state"))
	if metricsURL != "" {
		t.hitRatio = func(ctx context.Context) (float64, error) { return promHitRatio(ctx, metricsURL) }
	}
	return t, nil
}

// metricServedBytes is the Prometheus counter promHitRatio reads: bytes
// served to clients, labelled source="hit" (cache disk), "miss" or
// "bypass" (fetched from upstream for them).
const metricServedBytes = "sitebox_cache_served_bytes_total"

var sourceLabel = regexp.MustCompile(`source="(\w+)"`)

// promHitRatio is the hook for a cache that reports its own hit ratio: it
// reads Prometheus text exposition from url and returns hit ÷ all served
// bytes. Without it the bench computes 1 − upstream ÷ served.
func promHitRatio(ctx context.Context, url string) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics %s: %s", url, resp.Status)
	}
	vals := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, labels, _ := strings.Cut(f[0], "{")
		if name != metricServedBytes {
			continue
		}
		source := ""
		if m := sourceLabel.FindStringSubmatch(labels); m != nil {
			source = m[1]
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			vals[source] += v // summed over other labels
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("metrics %s: %w", url, err)
	}
	hit, ok := vals["hit"]
	if !ok {
		return 0, fmt.Errorf("metrics %s: no %s{source=\"hit\"}", url, metricServedBytes)
	}
	var total float64
	for _, v := range vals {
		total += v
	}
	if total == 0 {
		return 0, fmt.Errorf("metrics %s: nothing served yet", url)
	}
	return hit / total, nil
}

// siteboxDiagnosis reads the cache's own counters over its admin socket:
// the figures that explain a missed target.
func siteboxDiagnosis(stateDir string) func(context.Context) string {
	return func(ctx context.Context) string {
		st, err := admin.NewClient(stateDir).Stats(ctx)
		if err != nil {
			return "cache stats: " + err.Error()
		}
		return fmt.Sprintf("cache: served hit %s (%s from RAM) miss %s bypass %s; upstream %s (%d errors); %d coalesced, %d read-ahead blocks, %d writes dropped; written %s",
			sitebench.MB(st.HitBytes), sitebench.MB(st.RAMHitBytes), sitebench.MB(st.MissBytes), sitebench.MB(st.BypassBytes), sitebench.MB(st.UpstreamBytes), st.UpstreamErrors,
			st.CoalescedWaits, st.ReadAheadBlocks, st.WritesDropped, sitebench.MB(st.WrittenBytes))
	}
}

func blockSizeLine(n int64) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("block_size = \"%d\"", n)
}
