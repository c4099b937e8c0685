package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	xrdserver "sitebox/internal/xrootd/server"
)

func sampleRootStats() xrdserver.LimitStats {
	return xrdserver.LimitStats{Sessions: 12, OpenFiles: 30, TPCGrants: 2,
		Limits: xrdserver.Limits{Sessions: 2500, SessionsPerClient: 312, SessionsPerNetwork: 625,
			OpenFiles: 10000, OpenFilesPerClient: 1250, OpenFilesPerNetwork: -1, OpenFilesPerSession: 1024, SubstreamsPerSession: 15},
		TPCGrantLimits: [3]int{64, 256, 4096},
		Refused:        map[string]int64{"sessions_per_network": 7, "tpc_grants_per_client": 936},
		Reclaimed:      map[string]int64{"idle": 3}}
}

func TestRootCollectorValues(t *testing.T) {
	c := NewRootCollector("data", sampleRootStats)
	want := `
# HELP sitebox_root_sessions root:// sessions held (each bound substream is one).
# TYPE sitebox_root_sessions gauge
sitebox_root_sessions{listener="data"} 12
# HELP sitebox_root_reclaimed_sessions_total root:// sessions closed to make room for a new client, by why: idle (they held nothing) or silent (only files open for reading, untouched for the idle timeout).
# TYPE sitebox_root_reclaimed_sessions_total counter
sitebox_root_reclaimed_sessions_total{listener="data",reason="idle"} 3
sitebox_root_reclaimed_sessions_total{listener="data",reason="silent"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "sitebox_root_sessions", "sitebox_root_reclaimed_sessions_total"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name, label string
		want        float64
	}{
		{"sitebox_root_limit", "sessions_per_network", 625},
		{"sitebox_root_limit", "open_files_per_network", -1},
		{"sitebox_root_limit", "tpc_grants_per_client", 64},
		{"sitebox_root_refusals_total", "sessions_per_network", 7},
		{"sitebox_root_refusals_total", "tpc_grants_per_client", 936},
		{"sitebox_root_refusals_total", "open_files", 0},
	} {
		if got := collected(t, c, m.name, m.label); got != m.want {
			t.Errorf("%s{limit=%q} = %v, want %v", m.name, m.label, got, m.want)
		}
	}
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// collected is the value of the series name{limit=limit} c collects.
func collected(t *testing.T, c prometheus.Collector, name, limit string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "limit" && l.GetValue() == limit {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no series %s{limit=%q}", name, limit)
	return 0
}

// A box with a director on listeners of its own runs two root:// servers:
// both collectors register in one registry, told apart by listener.
func TestRootCollectorsOfTwoListeners(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(NewRootCollector("data", sampleRootStats)); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(NewRootCollector("director", sampleRootStats)); err != nil {
		t.Fatalf("the director's root:// collector beside the data one: %v", err)
	}
	n, err := testutil.GatherAndCount(reg, "sitebox_root_sessions")
	if err != nil || n != 2 {
		t.Errorf("sitebox_root_sessions series: %d (%v), want one per listener", n, err)
	}
}
