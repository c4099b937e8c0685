package box

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/internal/director"
	"sitebox/internal/units"
)

// ProbePath serves throughput probes: GET ProbePath?bytes=N streams N
// bytes (at most 1 GiB) that mean nothing.
const ProbePath = director.APIPrefix + "probe"

// probeBlock is what probe answers repeat: random, so compression on the
// way cannot flatter the figure. It is made at the first probe, not at
// the start of every sitebox command.
var probeBlock = sync.OnceValue(func() []byte {
	b := make([]byte, 1<<20)
	rand.Read(b)
	return b
})

func serveProbe(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
	if err != nil || n <= 0 || n > 1<<30 {
		http.Error(w, "bytes must be a number from 1 to 1073741824", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	block := probeBlock()
	for n > 0 {
		m := min(n, int64(len(block)))
		if _, err := w.Write(block[:m]); err != nil {
			return
		}
		n -= m
	}
}

// prober probes the other boxes of the fleet every interval and keeps the
// results for the next advertisements.
type prober struct {
	box      *Box
	interval time.Duration
	size     int64
	client   *http.Client // probes carry nothing of value: certificates are not checked
	dirs     *http.Client // to read the fleet from the directors

	mu      sync.Mutex
	results []director.ProbeResult
}

func (b *Box) newProber(dirs *http.Client) (*prober, error) {
	pc := b.cfg.Probe
	if pc.Interval == "" || pc.Interval == "0" || len(b.cfg.Advertise.To) == 0 {
		return nil, nil
	}
	iv, err := time.ParseDuration(pc.Interval)
	if err != nil || iv <= 0 {
		return nil, err
	}
	size := int64(64 << 20)
	if pc.Size != "" {
		if size, err = units.ParseSize(pc.Size); err != nil {
			return nil, fmt.Errorf("probe.size: %w", err)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	tr.DisableCompression = true
	return &prober{box: b, interval: iv, size: size, dirs: dirs,
		client: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}, nil
}

// run probes until ctx ends.
func (p *prober) run(ctx context.Context) error {
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
func (p *prober) round(ctx context.Context) {
	targets := map[string]string{} // name → https base
	for _, d := range p.box.cfg.Advertise.To {
		f, err := p.fleet(ctx, d)
		if err != nil {
			p.box.log.Debug("probe: cannot read the fleet", "director", d, "err", err)
			continue
		}
		for _, s := range f.Servers {
			name := strings.TrimSuffix(s.Name, "-cache")
			if s.HTTPS != "" && name != p.box.cfg.Server.Name && s.Role != director.RoleDirector {
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

func (p *prober) fleet(ctx context.Context, dir string) (*director.Federation, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimSuffix(dir, "/")+director.APIPrefix+"federation", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.dirs.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var f director.Federation
	return &f, json.NewDecoder(resp.Body).Decode(&f)
}

func (p *prober) probe(ctx context.Context, name, base string) director.ProbeResult {
	r := director.ProbeResult{To: name, At: time.Now()}
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

// recent returns the results to advertise.
func (p *prober) recent() []director.ProbeResult {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]director.ProbeResult(nil), p.results...)
}
