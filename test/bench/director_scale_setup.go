package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// scaleDirector is a sitebox director of the benchmark: the one under
// test, or one of a tree's site and regional directors.
type scaleDirector struct {
	name   string
	root   string // host:port of its root://
	https  string // https://host:port
	caFile string // its generated https certificate, trusted by the advertisers
	// metrics is its /metrics URL ("" when it has none).
	metrics string
	client  *http.Client
	rss     func() (int64, error)
	cpu     func() (time.Duration, error)
	stop    func()
}

// directorSpec is how to run one director: its box name and site, where
// it keeps its files, its listeners (chosen before it starts, so that
// its parent can approve it first), who may advertise to it and, below
// the top, the director it advertises to.
type directorSpec struct {
	name, site          string
	dir                 string
	rport, hport, mport int // mport 0: no /metrics listener
	maxServers          int
	approve             func(membersFile string) error
	parent              *scaleDirector
	interval            time.Duration // of its own ads to the parent
}

// newDirectorSpec picks the ports of a director.
func newDirectorSpec(name, site, dir string, metrics bool) (*directorSpec, error) {
	s := &directorSpec{name: name, site: site, dir: dir}
	ports := []*int{&s.rport, &s.hport}
	if metrics {
		ports = append(ports, &s.mport)
	}
	for _, p := range ports {
		var err error
		if *p, err = peers.FreePort(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *directorSpec) state() string { return filepath.Join(s.dir, "state") }

// endpoints are the root:// and https:// endpoints the director's box
// advertises (its listeners), as its parent approves them.
func (s *directorSpec) endpoints() (root, https string) {
	return "127.0.0.1:" + strconv.Itoa(s.rport), "https://127.0.0.1:" + strconv.Itoa(s.hport)
}

// startScaleDirector runs `sitebox serve` with only the director role.
// Its members are approved (approve writes the members file) before it
// starts, as `sitebox federation approve` would have recorded them.
func startScaleDirector(ctx context.Context, bin, dir string, servers int, approve func(membersFile string) error) (*scaleDirector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("sitebox binary: %w", err)
	}
	spec, err := newDirectorSpec("bench-director", "", dir, false)
	if err != nil {
		return nil, err
	}
	spec.maxServers, spec.approve = servers, approve
	return spec.start(ctx, bin)
}

// start writes the director's config and members file and runs it.
func (s *directorSpec) start(ctx context.Context, bin string) (*scaleDirector, error) {
	state := s.state()
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	if s.approve != nil {
		if err := s.approve(director.MembersFile(state)); err != nil {
			return nil, err
		}
	}
	cfgFile := filepath.Join(s.dir, "sitebox.toml")
	if err := os.WriteFile(cfgFile, []byte(s.config()), 0o644); err != nil {
		return nil, err
	}
	ports := []int{s.rport, s.hport}
	if s.mport > 0 {
		ports = append(ports, s.mport)
	}
	p, err := peers.StartSitebox(ctx, bin, ports, "serve", "--config", cfgFile)
	if err != nil {
		return nil, fmt.Errorf("start sitebox director %s: %w", s.name, err)
	}
	root, https := s.endpoints()
	d := &scaleDirector{
		name:   s.name,
		root:   root,
		https:  https,
		caFile: filepath.Join(state, "tls", tlsutil.CertName),
		rss:    p.PeakRSS,
		cpu:    p.CPUTime,
		stop:   p.Stop,
	}
	if s.mport > 0 {
		d.metrics = "http://127.0.0.1:" + strconv.Itoa(s.mport) + "/metrics"
	}
	if d.client, err = tlsutil.HTTPClient(d.caFile, false, time.Minute); err != nil {
		p.Stop()
		return nil, fmt.Errorf("the director's https certificate: %w", err)
	}
	return d, nil
}

// config is the director's sitebox.toml.
func (s *directorSpec) config() string {
	var b strings.Builder
	fmt.Fprintf(&b, "[server]\nname = %q\n", s.name)
	if s.site != "" {
		fmt.Fprintf(&b, "site = %q\n", s.site)
	}
	fmt.Fprintf(&b, "state_dir = %q\nlog_level = \"warn\"\n", s.state())
	if s.mport > 0 {
		fmt.Fprintf(&b, "metrics_addr = \"127.0.0.1:%d\"\n", s.mport)
	}
	fmt.Fprintf(&b, `
[root]
addr = "127.0.0.1:%d"

[https]
addr = "127.0.0.1:%d"
# Every simulated member advertises from 127.0.0.1, where a federation's
# come from as many addresses: the per-client connection cap would be
# measuring the simulation, not the director.
max_conns_per_client = -1

[director]
enabled = true
max_servers = %d
`, s.rport, s.hport, max(s.maxServers, director.DefaultMaxServers))
	if s.parent != nil {
		fmt.Fprintf(&b, "\n[advertise]\nto = [%q]\ninterval = %q\nca = %q\n", s.parent.https, s.interval.String(), s.parent.caFile)
	}
	return b.String()
}

// usable counts the data servers the director lists as usable now (a
// tree's directors below it are listed too, and not counted).
func (d *scaleDirector) usable(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.https+director.APIPrefix+"federation", nil)
	if err != nil {
		return 0, err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("federation view: %s", resp.Status)
	}
	var f director.Federation
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil {
		return 0, fmt.Errorf("federation view: %w", err)
	}
	n := 0
	for _, s := range f.Servers {
		if s.Role != director.RoleDirector && !s.Down && s.DownSince.IsZero() && f.Now.Before(s.Expires) {
			n++
		}
	}
	return n, nil
}

// waitUsable waits until the director lists want usable servers, or
// within has passed; it returns how many it listed last. The view is
// asked for every second, or less often with many servers (it is all of
// them, as JSON: asking must not be what slows the director down).
func (d *scaleDirector) waitUsable(ctx context.Context, want int, within time.Duration) (int, error) {
	deadline := time.Now().Add(within)
	every := time.Duration(max(1, want/2000)) * time.Second
	last := 0
	var lastErr error
	for {
		n, err := d.usable(ctx)
		if err == nil {
			last, lastErr = n, nil
			if n >= want {
				return n, nil
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			if last == 0 && lastErr != nil {
				return 0, fmt.Errorf("the director's federation view: %w", lastErr)
			}
			return last, nil
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(every):
		}
	}
}
