package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	xrdserver "sitebox/internal/xrootd/server"
)

// NewRootCollector reports a root:// server's limits from one snapshot
// per scrape: what is held against them, the limits in force, the
// refusals past each and the sessions closed to make room for others.
// listener names the server ("data", or "director" for a director's own
// listener).
func NewRootCollector(listener string, stats func() xrdserver.LimitStats) prometheus.Collector {
	// The listener is a constant label: a box with a director on
	// listeners of its own registers one collector per root:// server,
	// and the registry takes same-named metrics apart by their constant
	// labels.
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "root", name), help,
			labels, prometheus.Labels{"listener": listener})
	}
	return &rootCollector{stats: stats,
		sessions:  d("sessions", "root:// sessions held (each bound substream is one)."),
		files:     d("open_files", "Files open on root:// sessions."),
		grants:    d("tpc_grants", "root:// third-party copy grants waiting for their destination."),
		limit:     d("limit", "The root:// limits in force (-1: none), by name.", "limit"),
		refused:   d("refusals_total", "Sessions and opens refused past a root:// limit, by the limit's name.", "limit"),
		reclaimed: d("reclaimed_sessions_total", "root:// sessions closed to make room for a new client, by why: idle (they held nothing) or silent (only files open for reading, untouched for the idle timeout).", "reason"),
	}
}

type rootCollector struct {
	stats                                              func() xrdserver.LimitStats
	sessions, files, grants, limit, refused, reclaimed *prometheus.Desc
}

func (c *rootCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.sessions, c.files, c.grants, c.limit, c.refused, c.reclaimed} {
		ch <- d
	}
}

func (c *rootCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(c.sessions, st.Sessions)
	gauge(c.files, st.OpenFiles)
	gauge(c.grants, st.TPCGrants)
	l := st.Limits
	for name, v := range map[string]int{
		"sessions": l.Sessions, "sessions_per_client": l.SessionsPerClient, "sessions_per_network": l.SessionsPerNetwork,
		"open_files": l.OpenFiles, "open_files_per_client": l.OpenFilesPerClient, "open_files_per_network": l.OpenFilesPerNetwork,
		"open_files_per_session": l.OpenFilesPerSession, "substreams_per_session": l.SubstreamsPerSession,
		"tpc_grants_per_client": st.TPCGrantLimits[0], "tpc_grants_per_network": st.TPCGrantLimits[1], "tpc_grants": st.TPCGrantLimits[2],
	} {
		gauge(c.limit, v, name)
		if name != "substreams_per_session" {
			ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.Refused[name]), name)
		}
	}
	for _, why := range []string{"idle", "silent"} {
		ch <- prometheus.MustNewConstMetric(c.reclaimed, prometheus.CounterValue, float64(st.Reclaimed[why]), why)
	}
}
