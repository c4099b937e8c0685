package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"sitebox/test/peers"
)

// DirectorConfig describes the redirector benchmark: C clients opening
// files through a redirector, the sitebox director and a real cmsd
// manager side by side, both sending them to the same xrootd data server.
// Zero fields take the documented defaults.
type DirectorConfig struct {
	Sitebox  string        // sitebox binary for the "sitebox" setup
	WorkDir  string        // scratch: the data server's files, configs, logs
	Files    int           // files on the data server, opened round-robin (default 100)
	Clients  []int         // parallel clients per point (default 1, 4, 16)
	Duration time.Duration // measurement per setup and client count (default 10 s)
	Setups   []string      // any of sitebox, cmsd (default both)
	// WarmWait bounds the kXR_wait time honoured per file during the
	// warm-up (default 30 s).
	WarmWait time.Duration
	Out      io.Writer // progress lines
}

func (c *DirectorConfig) applyDefaults() {
	if c.Files <= 0 {
		c.Files = 100
	}
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 4, 16}
	}
	if c.Duration <= 0 {
		c.Duration = 10 * time.Second
	}
	if len(c.Setups) == 0 {
		c.Setups = []string{"sitebox", "cmsd"}
	}
	if c.WarmWait <= 0 {
		c.WarmWait = 30 * time.Second
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

func (c *DirectorConfig) validate() error {
	seen := map[string]bool{}
	for _, s := range c.Setups {
		switch s {
		case "sitebox", "cmsd":
		default:
			return fmt.Errorf("unknown setup %q (want sitebox or cmsd)", s)
		}
		if seen[s] {
			return fmt.Errorf("setup %q given twice", s)
		}
		seen[s] = true
	}
	for _, n := range c.Clients {
		if n <= 0 {
			return fmt.Errorf("client count %d: want at least 1", n)
		}
	}
	if seen["sitebox"] && c.Sitebox == "" {
		return fmt.Errorf("no sitebox binary given for the sitebox setup")
	}
	return nil
}

// DirectorReport is the whole run.
type DirectorReport struct {
	Config     DirectorConfig
	DataServer string // host:port the redirects must name
	CPUs       int
	// Floor is kXR_stat answered by the data server itself at one client:
	// the round trip no redirect can beat.
	Floor  DirectorPoint
	Points []DirectorPoint // one per client count and setup, in run order
	// PeakRSS of each redirector over the whole run: the sitebox process,
	// and the manager's xrootd and cmsd together.
	PeakRSS map[string]int64
}

// DirectorPoint is one setup at one client count.
type DirectorPoint struct {
	Setup   string // sitebox, cmsd, or direct (the floor)
	Clients int
	Err     string // why the point could not run; nothing else is set then

	Done       int     // redirects (direct: stat answers)
	PerSec     float64 // Done per second
	P50, P99   time.Duration
	Waits      int // kXR_wait answers during the measurement
	WarmWaits  int // kXR_wait answers during the warm-up
	Errors     int
	FirstError string
	Seconds    float64
}

// redirector is one setup under test.
type redirector struct {
	name string
	addr string
	rss  func() (int64, error)
	stop func()
}

// Director runs the benchmark. One real xrootd data server holds
// cfg.Files small files; its cmsd is subscribed to a cmsd+xrootd manager,
// and a sitebox director lists it as a static server. For every client
// count each redirector is warmed up (every file opened once) and then
// loaded for cfg.Duration, the one that goes first alternating.
func Director(ctx context.Context, cfg DirectorConfig) (*DirectorReport, error) {
	cfg.applyDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	data := filepath.Join(cfg.WorkDir, "data")
	paths, err := makeDirectorFiles(data, cfg.Files)
	if err != nil {
		return nil, err
	}
	rep := &DirectorReport{Config: cfg, CPUs: runtime.NumCPU(), PeakRSS: map[string]int64{}}

	cl, err := startCluster(ctx, filepath.Join(cfg.WorkDir, "cluster"), data)
	if err != nil {
		return nil, err
	}
	defer cl.Stop()
	rep.DataServer = cl.ServerAddr
	fmt.Fprintf(cfg.Out, "bench director: data server %s with %d files; manager %s; data server logged in\n", cl.ServerAddr, cfg.Files, cl.ManagerAddr)
	dataPort := portOf(cl.ServerAddr)

	var reds []*redirector
	for _, s := range cfg.Setups {
		var r *redirector
		switch s {
		case "cmsd":
			r = &redirector{name: "cmsd", addr: cl.ManagerAddr, rss: cl.ManagerPeakRSS, stop: func() {}}
		case "sitebox":
			if r, err = startSiteboxDirector(ctx, cfg.Sitebox, filepath.Join(cfg.WorkDir, "sitebox"), cl.ServerAddr); err != nil {
				return nil, err
			}
			defer r.stop()
		}
		reds = append(reds, r)
	}

	// The floor: the data server answering kXR_stat itself.
	rep.Floor = measure(ctx, &cfg, "direct", cl.ServerAddr, statOp(), paths, 1)
	fmt.Fprintln(cfg.Out, progressLine(rep.Floor))

	for i, n := range cfg.Clients {
		for j := range reds {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			r := reds[(i+j)%len(reds)] // alternate who goes first
			p := measure(ctx, &cfg, r.name, r.addr, openOp(dataPort), paths, n)
			rep.Points = append(rep.Points, p)
			fmt.Fprintln(cfg.Out, progressLine(p))
		}
	}
	for _, r := range reds {
		if n, err := r.rss(); err == nil {
			rep.PeakRSS[r.name] = n
		} else {
			fmt.Fprintf(cfg.Out, "  %s: peak RSS: %v\n", r.name, err)
		}
	}
	return rep, nil
}

// measure warms addr up with every path once, then runs n clients for
// cfg.Duration.
func measure(ctx context.Context, cfg *DirectorConfig, setup, addr string, op *loadOp, paths []string, n int) DirectorPoint {
	p := DirectorPoint{Setup: setup, Clients: n}
	var err error
	if p.WarmWaits, err = warmUp(ctx, addr, op, paths, cfg.WarmWait); err != nil {
		p.Err = err.Error()
		return p
	}
	res, err := runLoad(ctx, addr, op, paths, n, cfg.Duration)
	if err != nil {
		p.Err = err.Error()
		return p
	}
	p.Done, p.PerSec, p.Seconds = res.Done, res.PerSec(), res.Elapsed.Seconds()
	p.P50, p.P99 = res.Quantile(0.50), res.Quantile(0.99)
	p.Waits, p.Errors, p.FirstError = res.Waits, res.Errors, res.FirstError
	return p
}

func progressLine(p DirectorPoint) string {
	if p.Err != "" {
		return fmt.Sprintf("  %-7s clients=%-2d FAILED: %s", p.Setup, p.Clients, p.Err)
	}
	return fmt.Sprintf("  %-7s clients=%-2d %8.0f /s  p50 %s  p99 %s  waits %d (warm-up %d)  errors %d",
		p.Setup, p.Clients, p.PerSec, latText(p.P50), latText(p.P99), p.Waits, p.WarmWaits, p.Errors)
}

// makeDirectorFiles writes n small files (their content does not matter:
// nothing reads them) and returns their paths as clients name them.
func makeDirectorFiles(root string, n int) ([]string, error) {
	dir := filepath.Join(root, "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, n)
	for i := range paths {
		name := fmt.Sprintf("file%04d.dat", i)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
			return nil, err
		}
		paths[i] = "/bench/" + name
	}
	return paths, nil
}

// startCluster starts the data server and the cmsd manager on free ports.
func startCluster(ctx context.Context, dir, data string) (*peers.Cluster, error) {
	var ports [3]int
	for i := range ports {
		p, err := peers.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	cl, err := peers.StartCluster(ctx, peers.ClusterConfig{
		DataDir: data, WorkDir: dir,
		ManagerPort: ports[0], CmsPort: ports[1], DataPort: ports[2],
	})
	if err != nil {
		return nil, fmt.Errorf("start cmsd cluster: %w", err)
	}
	return cl, nil
}
