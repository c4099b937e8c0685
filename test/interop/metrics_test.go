package interop

import (
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"sitebox/test/peers"
)

// scrape reads a box's /metrics with the Prometheus text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("metrics do not parse: %v", err)
	}
	return fams
}

// value is the sample of fam whose labels include want, or -1.
func value(fams map[string]*dto.MetricFamily, fam string, want map[string]string) float64 {
	f := fams[fam]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		}
	}
	return -1
}

// After real transfers — xrdcp over root:// both ways, curl over https:// —
// the byte counters equal the bytes moved, per protocol and direction.
func TestMetricsCountTransfers(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")
	mp, _ := peers.FreePort()
	b := startBox(t, 1, "--metrics-addr", "127.0.0.1:"+strconv.Itoa(mp))
	url := "http://127.0.0.1:" + strconv.Itoa(mp) + "/metrics"
	down := writeRandom(t, filepath.Join(b.pools[0], "down.bin"), 3<<20+123)
	upFile := filepath.Join(t.TempDir(), "up.bin")
	up := writeRandom(t, upFile, 1<<20+7)
	dir := t.TempDir()
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/down.bin", dir+"/a")                                  // root out
	run(t, false, "xrdcp", "-f", upFile, b.rootURL+"//store/up-root.bin")                                 // root in
	run(t, false, "curl", "-sSf", "--cacert", b.certFile, "-o", dir+"/b", b.httpsURL+"/store/down.bin")   // https out
	run(t, false, "curl", "-sSf", "--cacert", b.certFile, "-T", upFile, b.httpsURL+"/store/up-https.bin") // https in
	sameFile(t, dir+"/a", down)
	time.Sleep(200 * time.Millisecond)
	fams := scrape(t, url)
	for _, c := range []struct {
		proto, dir string
		want       float64
	}{
		{"root", "out", float64(len(down))},
		{"root", "in", float64(len(up))},
		{"https", "out", float64(len(down))},
		{"https", "in", float64(len(up))},
	} {
		got := value(fams, "sitebox_transfer_bytes_total", map[string]string{"proto": c.proto, "direction": c.dir, "namespace": "/store", "vo": "none"})
		if got != c.want {
			t.Errorf("%s %s: counted %v bytes, moved %v", c.proto, c.dir, got, c.want)
		}
	}
	if value(fams, "sitebox_connections", map[string]string{"proto": "root"}) < 0 {
		t.Error("no connection gauge for root://")
	}
	if value(fams, "process_resident_memory_bytes", nil) <= 0 {
		t.Error("no process metrics")
	}
}
