package fleet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Prober probes the other boxes of the fleet every Interval and keeps
// the results for the box's next advertisements.
type Prober struct {
	self      string   // this box's name, not probed
	directors []string // base URLs the fleet is read from
	interval  time.Duration
	size      int64
	client    *http.Client // probes carry nothing of value: certificates are not checked
	dirs      *http.Client // to read the fleet from the directors
	log       *slog.Logger

	mu      sync.Mutex
	results []ProbeResult
}

// ProberConfig describes a Prober.
type ProberConfig struct {
	Self      string        // this box's name
	Directors []string      // the directors it advertises to
	Interval  time.Duration // between rounds (required, > 0)
	Size      int64         // bytes per probe
	Dirs      *http.Client  // to read the fleet from the directors
	Log       *slog.Logger
}

// NewProber returns a prober; Run starts it.
func NewProber(c ProberConfig) *Prober {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	tr.DisableCompression = true
	return &Prober{self: c.Self, directors: c.Directors, interval: c.Interval, size: c.Size, dirs: c.Dirs, log: c.Log,
		client: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}
}

// Run probes until ctx ends.
func (p *Prober) Run(ctx context.Context) error {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		p.round(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// round probes every other box the directors know, one at a time (in
// parallel they would measure each other).
func (p *Prober) round(ctx context.Context) {
	targets := map[string]string{} // name → https base
	for _, d := range p.directors {
		f, err := p.fleet(ctx, d)
		if err != nil {
			p.log.Debug("probe: cannot read the fleet", "director", d, "err", err)
			continue
		}
		for _, s := range f.Servers {
			name := strings.TrimSuffix(s.Name, "-cache")
			if s.HTTPS != "" && name != p.self && s.Role != roleDirector {
				targets[name] = s.HTTPS
			}
		}
	}
	for name, base := range targets {
		res := p.probe(ctx, name, base)
		p.mu.Lock()
		p.results = append(p.results, res)
		if len(p.results) > 100 {
			p.results = p.results[len(p.results)-100:]
		}
		p.mu.Unlock()
	}
}

// roleDirector is director.RoleDirector: directors are not probed.
const roleDirector = "director"

// fleetView is the part of a director's GET APIPrefix+"federation"
// answer (director.Federation) the prober reads.
type fleetView struct {
	Servers []struct {
		Name  string `json:"name"`
		Role  string `json:"role"`
		HTTPS string `json:"https"`
	} `json:"servers"`
}

func (p *Prober) fleet(ctx context.Context, dir string) (*fleetView, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(dir, "/")+APIPrefix+"federation", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.dirs.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var f fleetView
	return &f, json.NewDecoder(resp.Body).Decode(&f)
}

func (p *Prober) probe(ctx context.Context, name, base string) ProbeResult {
	r := ProbeResult{To: name, At: time.Now()}
	req, err := http.NewRequestWithContext(ctx, "GET", base+ProbePath+"?bytes="+strconv.FormatInt(p.size, 10), nil)
	if err == nil {
		var resp *http.Response
		if resp, err = p.client.Do(req); err == nil {
			r.Bytes, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s", resp.Status)
			}
		}
	}
	el := time.Since(r.At).Seconds()
	if err != nil {
		r.Error = err.Error()
	} else if el > 0 {
		r.MBps = float64(r.Bytes) / el / 1e6
	}
	return r
}

// Recent returns the results to advertise (none from a nil Prober, so a
// box without probes need not check).
func (p *Prober) Recent() []ProbeResult {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProbeResult(nil), p.results...)
}
