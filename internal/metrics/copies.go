package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"sitebox/internal/tpc"
)

// NewCopyBufferCollector reports the box's copy buffer budget ([tpc]
// buffer_memory) from one snapshot per scrape: how much of it copies
// hold, how many wait for a share and how many were refused one.
func NewCopyBufferCollector(stats func() tpc.BudgetStats) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "tpc", name), help, nil, nil)
	}
	return &copyBufferCollector{stats: stats,
		limit:   d("buffer_limit_bytes", "Memory all copies may hold in buffers at once ([tpc] buffer_memory)."),
		inUse:   d("buffer_bytes", "Memory copies hold in buffers now."),
		waiting: d("copies_waiting", "Copies waiting for buffer memory."),
		refused: d("copies_refused_total", "Copies refused because buffer memory stayed in use by others."),
		cut:     d("chunks_cut_total", "Chunks cut off, each failing its copy, because they held their buffer over 30 s while copies waited for memory."),
	}
}

type copyBufferCollector struct {
	stats                               func() tpc.BudgetStats
	limit, inUse, waiting, refused, cut *prometheus.Desc
}

func (c *copyBufferCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.limit, c.inUse, c.waiting, c.refused, c.cut} {
		ch <- d
	}
}

func (c *copyBufferCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(st.Limit))
	ch <- prometheus.MustNewConstMetric(c.inUse, prometheus.GaugeValue, float64(st.InUse))
	ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(st.Waiting))
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.Refused))
	ch <- prometheus.MustNewConstMetric(c.cut, prometheus.CounterValue, float64(st.Cut))
}
