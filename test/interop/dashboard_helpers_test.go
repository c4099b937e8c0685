package interop

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/web"
	"sitebox/test/peers"
)

// browser is Debian's headless Chromium, started the way this machine's
// closed network needs: no background or component traffic, no QUIC, a
// fresh profile per page.
type browser struct{ bin string }

func newBrowser(t *testing.T) browser {
	t.Helper()
	return browser{bin: peers.Require(t, "chromium")}
}

// render loads url, lets the page's script fetch its snapshot, and
// returns the DOM as the page shows it; it saves a screenshot to shot.
// Virtual time runs the page's timers at once but waits for its
// fetches, so one poll always lands inside the budget.
func (b browser) render(t *testing.T, url, shot string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--ignore-certificate-errors", "--hide-scrollbars",
		"--virtual-time-budget=4000", "--window-size=1400,1100", "--screenshot="+shot, "--dump-dom", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, tail(stderr.String(), 3000))
	}
	if _, err := os.Stat(shot); err != nil {
		t.Fatalf("chromium wrote no screenshot: %v\n%s", err, tail(stderr.String(), 3000))
	}
	t.Logf("dashboard screenshot: %s", shot)
	return string(out)
}

// artifact is where a screenshot is kept after the test:
// $SITEBOX_ARTIFACTS, else /tmp/sitebox-artifacts.
func artifact(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("SITEBOX_ARTIFACTS")
	if dir == "" {
		dir = "/tmp/sitebox-artifacts"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

func dashboardURL(b *box) string { return b.httpsURL + web.Prefix }

// snapshot reads a box's dashboard JSON, trusting its certificate.
func snapshot(t *testing.T, b *box) web.Snapshot {
	t.Helper()
	pem, err := os.ReadFile(b.certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(b.httpsURL + web.SnapshotPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s web.Snapshot
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", web.SnapshotPath, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

// snapshotAs is the raw snapshot reply of b to a request with token (""
// for none), whatever its status.
func snapshotAs(t *testing.T, b *box, token string) string {
	t.Helper()
	pem, err := os.ReadFile(b.certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer c.CloseIdleConnections()
	req, _ := http.NewRequest("GET", b.httpsURL+web.SnapshotPath, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + string(raw)
}

// waitSnapshot polls b's snapshot until ok holds, so the page is
// rendered only once the box has what the test looks for.
func waitSnapshot(t *testing.T, b *box, what string, within time.Duration, ok func(web.Snapshot) bool) web.Snapshot {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := snapshot(t, b)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			raw, _ := json.MarshalIndent(s, "", "  ")
			t.Fatalf("waited %v for %s; snapshot:\n%s", within, what, tail(string(raw), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// peakRate is the highest rate of series key ("root/out") in the
// snapshot.
func peakRate(s web.Snapshot, key string) float64 {
	peak := 0.0
	for _, v := range s.Transfers.Rates.Series[key] {
		peak = max(peak, v)
	}
	return peak
}

// textFrom is what the page shows from the element with id to the end
// of its card, as one line: tags stripped, entities (&lt;) kept as the
// DOM serialises them.
func textFrom(t *testing.T, dom, id string) string {
	t.Helper()
	i := strings.Index(dom, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("the page has no element #%s:\n%s", id, tail(dom, 6000))
	}
	rest := dom[i:]
	end := strings.Index(rest, "</section>")
	if end < 0 {
		end = len(rest)
	}
	rest = rest[strings.Index(rest, ">")+1 : end]
	return strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(rest, " ")), " ")
}

// figure is the number pattern's first group matches in text, e.g. 3.20
// for `peak ([0-9.]+) MB/s` in "peak 3.20 MB/s".
func figure(t *testing.T, text, pattern string) float64 {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%q not found in %q", pattern, text)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("%q in %q: %v", pattern, text, err)
	}
	return f
}
