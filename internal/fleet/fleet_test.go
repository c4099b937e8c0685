package fleet

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"
)

func TestProbeHandler(t *testing.T) {
	h := NewProbeHandler()
	for _, tc := range []struct {
		name  string
		query string
		code  int
		size  int
	}{
		{name: "small", query: "bytes=10", code: 200, size: 10},
		{name: "over a block", query: "bytes=1048577", code: 200, size: 1<<20 + 1},
		{name: "missing", query: "", code: 400},
		{name: "zero", query: "bytes=0", code: 400},
		{name: "negative", query: "bytes=-1", code: 400},
		{name: "over 1 GiB", query: "bytes=1073741825", code: 400},
		{name: "not a number", query: "bytes=lots", code: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, ProbePath+"?"+tc.query, nil))
			if w.Code != tc.code {
				t.Fatalf("code %d, want %d (%s)", w.Code, tc.code, w.Body)
			}
			if tc.code == 200 && w.Body.Len() != tc.size {
				t.Errorf("body %d bytes, want %d", w.Body.Len(), tc.size)
			}
		})
	}
}

func TestMatrixRecordSkipsRepeats(t *testing.T) {
	var m Matrix
	now := time.Now().UTC()
	rs := []ProbeResult{{To: "b", At: now.Add(-2 * time.Second), MBps: 10}, {To: "b", At: now.Add(-time.Second), MBps: 30}, {To: "c", At: now, Error: "refused"}}
	m.Record("a", rs)
	m.Record("a", rs) // the same ad again: nothing new
	cells := m.List()
	if len(cells) != 2 {
		t.Fatalf("cells %+v, want a→b and a→c", cells)
	}
	b, c := cells[0], cells[1]
	if b.To != "b" || b.N != 2 || b.Avg != 20 || b.Min != 10 || b.Max != 30 || b.Last != 30 {
		t.Errorf("a→b %+v", b)
	}
	if c.To != "c" || c.N != 0 || c.Fails != 1 {
		t.Errorf("a→c %+v", c)
	}
}

func TestDowntimeFile(t *testing.T) {
	dir := t.TempDir()
	if d, err := CurrentDowntime(dir); d != nil || err != nil {
		t.Fatalf("no file: %v %v", d, err)
	}
	now := time.Now()
	ds := []Downtime{
		{Start: now.Add(time.Hour), End: now.Add(2 * time.Hour), Reason: "later"},
		{Start: now.Add(-2 * time.Hour), End: now.Add(-time.Hour), Reason: "over"},
		{Start: now.Add(-time.Minute), End: now.Add(time.Hour), Reason: "now"},
	}
	if err := SaveDowntimes(dir, ds); err != nil {
		t.Fatal(err)
	}
	got, err := LoadDowntimes(dir)
	if err != nil || len(got) != 2 || got[0].Reason != "now" || got[1].Reason != "later" {
		t.Fatalf("loaded %+v %v, want now then later", got, err)
	}
	if d, _ := CurrentDowntime(dir); d == nil || d.Reason != "now" || !d.Active(now) {
		t.Errorf("current %+v", d)
	}
	if err := os.WriteFile(dir+"/"+DowntimeFile, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CurrentDowntime(dir); err == nil {
		t.Error("a broken file read without error")
	}
}
