package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Signer signs an advertisement's body into its request headers;
// directors refuse unsigned ads (director.Signer is the implementation).
type Signer interface {
	Sign(h http.Header, body []byte)
}

// Advertiser announces a server to its directors every Interval. A
// director that cannot be reached is logged when it goes away and when it
// comes back, not at every attempt. A is the advertisement, sent as JSON
// (director.Ad); it is generic so this package need not import the
// director, which imports it.
type Advertiser[A any] struct {
	To       []string // directors' base URLs, https://host:port
	Interval time.Duration
	Client   *http.Client
	// Ads returns the current advertisements (free space and load change):
	// one per role the box plays, each saying Interval in seconds.
	Ads func() []A
	Log *slog.Logger
	// Signer signs each ad with the box's federation key; directors
	// refuse unsigned ads.
	Signer Signer

	mu       sync.Mutex        // protects failures and roots
	failures map[string]string // director → why its last ad failed
	roots    map[string]string // director → its root:// host:port, as it said
}

// DirectorRoot is the root:// address (host:port) the first director in
// To that told one in its answer to an ad, "" before any did: where the
// box sends root:// clients while it drains. It is safe for concurrent
// use.
func (a *Advertiser[A]) DirectorRoot() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, to := range a.To {
		if r := a.roots[to]; r != "" {
			return r
		}
	}
	return ""
}

func (a *Advertiser[A]) learnRoot(to, root string) {
	if root == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.roots == nil {
		a.roots = map[string]string{}
	}
	a.roots[to] = root
}

// Failures returns the directors the last advertisement could not reach
// or that refused it, with the reason: a box whose ads fail is not fine,
// whatever else it serves. It is safe for concurrent use.
func (a *Advertiser[A]) Failures() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]string, len(a.failures))
	for k, v := range a.failures {
		out[k] = v
	}
	return out
}

func (a *Advertiser[A]) record(to string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failures == nil {
		a.failures = map[string]string{}
	}
	if err != nil {
		a.failures[to] = err.Error()
	} else {
		delete(a.failures, to)
	}
}

// Run advertises until ctx ends.
func (a *Advertiser[A]) Run(ctx context.Context) error {
	// Each director's state: "" never reached, "ok", or the last error,
	// so a change (a refusal after approval, say) is logged, a repeat not.
	state := map[string]string{}
	t := time.NewTicker(a.Interval)
	defer t.Stop()
	for {
		var bodies [][]byte
		for _, ad := range a.Ads() {
			body, err := json.Marshal(ad)
			if err != nil {
				return err
			}
			bodies = append(bodies, body)
		}
		for _, to := range a.To {
			var err error
			for _, body := range bodies {
				if err = a.post(ctx, to, body); err != nil {
					break
				}
			}
			a.record(to, err)
			was := state[to]
			switch {
			case err != nil && err.Error() != was:
				a.Log.Warn("cannot advertise to director; will keep trying", "director", to, "err", err)
				state[to] = err.Error()
			case err == nil && was == "":
				a.Log.Info("advertising to director", "director", to, "every", a.Interval)
				state[to] = "ok"
			case err == nil && was != "ok":
				a.Log.Info("advertising to director again", "director", to)
				state[to] = "ok"
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (a *Advertiser[A]) post(ctx context.Context, to string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(to, "/")+APIPrefix+"advertise", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if a.Signer != nil {
		a.Signer.Sign(req.Header, body)
	}
	resp, err := a.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if root := resp.Header.Get(HeaderDirectorRoot); validHostPort(root) {
		a.learnRoot(to, root)
	}
	return nil
}

// validHostPort accepts host:port with a numeric port and nothing else,
// so a director cannot hand the box anything but an address.
func validHostPort(s string) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" || len(s) > 300 || strings.ContainsAny(s, "/?#@ \t\r\n") {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n > 0 && n < 65536
}
