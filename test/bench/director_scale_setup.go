package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/tlsutil"
	"sitebox/test/peers"
)

// scaleDirector is the sitebox director under test.
type scaleDirector struct {
	root   string // host:port of its root://
	https  string // https://host:port
	caFile string // its generated https certificate, trusted by the advertisers
	client *http.Client
	rss    func() (int64, error)
	cpu    func() (time.Duration, error)
	stop   func()
}

// startScaleDirector runs `sitebox serve` with only the director role.
// Its members are approved (approve writes the members file) before it
// starts, as `sitebox federation approve` would have recorded them.
func startScaleDirector(ctx context.Context, bin, dir string, servers int, approve func(membersFile string) error) (*scaleDirector, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("sitebox binary: %w", err)
	}
	state := filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		return nil, err
	}
	if err := approve(director.MembersFile(state)); err != nil {
		return nil, err
	}
	rport, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	hport, err := peers.FreePort()
	if err != nil {
		return nil, err
	}
	cfgText := fmt.Sprintf(`[server]
name = "bench-director"
state_dir = %q
log_level = "warn"

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
`, state, rport, hport, max(servers, director.DefaultMaxServers))
	cfgFile := filepath.Join(dir, "sitebox.toml")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		return nil, err
	}
	p, err := peers.StartSitebox(ctx, bin, []int{rport, hport}, "serve", "--config", cfgFile)
	if err != nil {
		return nil, fmt.Errorf("start sitebox director: %w", err)
	}
	d := &scaleDirector{
		root:   "127.0.0.1:" + strconv.Itoa(rport),
		https:  "https://127.0.0.1:" + strconv.Itoa(hport),
		caFile: filepath.Join(state, "tls", tlsutil.CertName),
		rss:    p.PeakRSS,
		cpu:    p.CPUTime,
		stop:   p.Stop,
	}
	if d.client, err = tlsutil.HTTPClient(d.caFile, false, time.Minute); err != nil {
		p.Stop()
		return nil, fmt.Errorf("the director's https certificate: %w", err)
	}
	return d, nil
}

// usable counts the servers the director lists as usable now.
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
		if !s.Down && s.DownSince.IsZero() && f.Now.Before(s.Expires) {
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
