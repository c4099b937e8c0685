package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ToxiproxyBinary finds toxiproxy-server: $SITEBOX_TOXIPROXY, bin/ next to
// the running executable or in the module root above the working directory
// (scripts/setup.sh links it there), $GOPATH/bin/server (where `go install`
// puts it), then toxiproxy-server on PATH.
func ToxiproxyBinary() (string, error) {
	var cands []string
	if p := os.Getenv("SITEBOX_TOXIPROXY"); p != "" {
		cands = append(cands, p)
	}
	if exe, err := os.Executable(); err == nil {
		cands = append(cands, filepath.Join(filepath.Dir(exe), "toxiproxy-server"))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				cands = append(cands, filepath.Join(d, "bin", "toxiproxy-server"))
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	if gopath != "" {
		cands = append(cands, filepath.Join(filepath.SplitList(gopath)[0], "bin", "server"))
	}
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return c, nil
		}
	}
	if p, err := exec.LookPath("toxiproxy-server"); err == nil {
		return p, nil
	}
	return "", errors.New("toxiproxy-server not found (run scripts/setup.sh, or go install github.com/Shopify/toxiproxy/v2/cmd/server@latest)")
}

// RequireToxiproxy is Require for Toxiproxy, which is found by
// ToxiproxyBinary rather than on PATH.
func RequireToxiproxy(t testing.TB) string {
	t.Helper()
	p, err := ToxiproxyBinary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("toxiproxy is required under CI: %v", err)
		}
		t.Skip(err)
	}
	return p
}

// Toxiproxy is a running toxiproxy-server, driven through its HTTP API.
// Safe for concurrent use.
type Toxiproxy struct {
	proc *Process
	api  string // http://127.0.0.1:PORT
	hc   *http.Client
}

// StartToxiproxy runs toxiproxy-server (bin as from ToxiproxyBinary) with
// its API on a free 127.0.0.1 port.
func StartToxiproxy(ctx context.Context, bin string) (*Toxiproxy, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	// It logs every connection at info; a benchmark makes thousands.
	cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
	p, err := start(ctx, "toxiproxy", cmd, []int{port}, "")
	if err != nil {
		return nil, err
	}
	return &Toxiproxy{proc: p, api: "http://127.0.0.1:" + strconv.Itoa(port), hc: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Stop ends the server and with it every proxy.
func (tp *Toxiproxy) Stop() { tp.proc.Stop() }

// Process is the server's child process.
func (tp *Toxiproxy) Process() *Process { return tp.proc }

// call sends body (if not nil) as JSON and decodes the answer into out.
func (tp *Toxiproxy) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, tp.api+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := tp.hc.Do(req)
	if err != nil {
		return fmt.Errorf("toxiproxy %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("toxiproxy %s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("toxiproxy %s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

// Link is one proxy: a listener on 127.0.0.1 whose connections are relayed
// to Upstream through the toxics set on it. Toxics act on each connection
// separately, so a bandwidth toxic limits every connection to its rate.
type Link struct {
	tp       *Toxiproxy
	Name     string
	Addr     string // 127.0.0.1:PORT that clients dial
	Upstream string // host:port
}

// Proxy creates a link named name from a free 127.0.0.1 port to upstream.
func (tp *Toxiproxy) Proxy(ctx context.Context, name, upstream string) (*Link, error) {
	var got struct {
		Listen string `json:"listen"`
	}
	// Port 0: the server binds a free port itself and answers with it.
	req := map[string]any{"name": name, "listen": "127.0.0.1:0", "upstream": upstream, "enabled": true}
	if err := tp.call(ctx, http.MethodPost, "/proxies", req, &got); err != nil {
		return nil, err
	}
	return &Link{tp: tp, Name: name, Addr: got.Listen, Upstream: upstream}, nil
}

// Toxic is one condition on a link, as in Toxiproxy's API.
type Toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`   // latency, bandwidth, timeout, reset_peer, slow_close, …
	Stream     string         `json:"stream"` // "downstream" (upstream → client) or "upstream"
	Toxicity   float64        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// AddToxic adds t; Toxicity 0 means 1 (every connection).
func (l *Link) AddToxic(ctx context.Context, t Toxic) error {
	if t.Toxicity == 0 {
		t.Toxicity = 1
	}
	if t.Stream == "" {
		t.Stream = "downstream"
	}
	return l.tp.call(ctx, http.MethodPost, "/proxies/"+l.Name+"/toxics", t, nil)
}

// RemoveToxic removes the toxic named name.
func (l *Link) RemoveToxic(ctx context.Context, name string) error {
	return l.tp.call(ctx, http.MethodDelete, "/proxies/"+l.Name+"/toxics/"+name, nil, nil)
}

// RemoveToxics removes every toxic, leaving a plain relay.
func (l *Link) RemoveToxics(ctx context.Context) error {
	var ts []Toxic
	if err := l.tp.call(ctx, http.MethodGet, "/proxies/"+l.Name+"/toxics", nil, &ts); err != nil {
		return err
	}
	for _, t := range ts {
		if err := l.RemoveToxic(ctx, t.Name); err != nil {
			return err
		}
	}
	return nil
}

// SetLatency delays data by d in each direction, so a round trip gains 2d.
// Named toxics are replaced, so it can be called again to change d.
func (l *Link) SetLatency(ctx context.Context, d time.Duration) error {
	return l.both(ctx, "latency", map[string]any{"latency": d.Milliseconds()})
}

// SetBandwidth limits each connection to bytesPerSec in each direction
// (Toxiproxy counts in units of 1000 bytes per second).
func (l *Link) SetBandwidth(ctx context.Context, bytesPerSec int64) error {
	kb := bytesPerSec / 1000
	if kb < 1 {
		return fmt.Errorf("bandwidth %d B/s: Toxiproxy's smallest rate is 1000 B/s", bytesPerSec)
	}
	return l.both(ctx, "bandwidth", map[string]any{"rate": kb})
}

func (l *Link) both(ctx context.Context, typ string, attrs map[string]any) error {
	for _, stream := range []string{"downstream", "upstream"} {
		name := typ + "_" + stream
		_ = l.RemoveToxic(ctx, name) // absent the first time
		if err := l.AddToxic(ctx, Toxic{Name: name, Type: typ, Stream: stream, Attributes: attrs}); err != nil {
			return err
		}
	}
	return nil
}

// SetEnabled opens or closes the link. Disabling closes its listener and
// every connection through it at once.
func (l *Link) SetEnabled(ctx context.Context, on bool) error {
	return l.tp.call(ctx, http.MethodPost, "/proxies/"+l.Name, map[string]any{"enabled": on}, nil)
}

// Cut drops every connection through the link (both ends see a close) and
// opens it again for new ones, like a WAN hiccup mid-transfer.
func (l *Link) Cut(ctx context.Context) error {
	if err := l.SetEnabled(ctx, false); err != nil {
		return err
	}
	return l.SetEnabled(ctx, true)
}

// Delete removes the link and closes its connections.
func (l *Link) Delete(ctx context.Context) error {
	return l.tp.call(ctx, http.MethodDelete, "/proxies/"+l.Name, nil, nil)
}
