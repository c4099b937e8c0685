package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"sitebox/internal/director"
	"sitebox/internal/jobs"
)

// NewDirectorCollector reports a director's decisions, locate latency and
// registry, from one Stats snapshot per scrape.
func NewDirectorCollector(stats func() director.Stats) prometheus.Collector {
	return &directorCollector{stats: stats,
		decisions: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "decisions_total"),
			"Requests the director answered, by kind: redirected to data at the client's site, to the site cache, to a replica, to the parent, to a VO federation; asked to wait; not found; loop stopped.", []string{"kind"}, nil),
		locate: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "locate_seconds"),
			"Time of one locate search (all candidate servers asked in parallel).", nil, nil),
		servers: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "servers"),
			"Servers in the registry, by state (usable or down).", []string{"state"}, nil),
		ads: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "advertisements_total"),
			"Signed advertisements received, by result (accepted or refused).", []string{"result"}, nil),
		adServers: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "advertised_servers_total"),
			"Registry entries set by accepted advertisements: the advertiser's own and, from a child director, each server below it.", nil, nil),
		filtered: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "director", "filtered_searches_total"),
			"Reads whose search the origins' holdings filters narrowed, by result: found on the servers they pointed to, or missed there (then every server was asked: files newer than their filters, or missing).", []string{"result"}, nil),
	}
}

type directorCollector struct {
	stats                                                func() director.Stats
	decisions, locate, servers, ads, adServers, filtered *prometheus.Desc
}

func (c *directorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.decisions, c.locate, c.servers, c.ads, c.adServers, c.filtered} {
		ch <- d
	}
}

func (c *directorCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.stats()
	for _, k := range []string{"site", "cache", "replica", "parent", "vo", "wait", "not_found", "down", "loop"} {
		ch <- prometheus.MustNewConstMetric(c.decisions, prometheus.CounterValue, float64(st.Decisions[k]), k)
	}
	buckets := map[float64]uint64{}
	for b, n := range st.Buckets {
		buckets[b] = uint64(n)
	}
	ch <- prometheus.MustNewConstHistogram(c.locate, uint64(st.Searches), st.SearchSeconds, buckets)
	ch <- prometheus.MustNewConstMetric(c.servers, prometheus.GaugeValue, float64(st.Servers-st.ServersDown), "usable")
	ch <- prometheus.MustNewConstMetric(c.servers, prometheus.GaugeValue, float64(st.ServersDown), "down")
	ch <- prometheus.MustNewConstMetric(c.ads, prometheus.CounterValue, float64(st.AdsAccepted), "accepted")
	ch <- prometheus.MustNewConstMetric(c.ads, prometheus.CounterValue, float64(st.AdsRefused), "refused")
	ch <- prometheus.MustNewConstMetric(c.adServers, prometheus.CounterValue, float64(st.AdServers))
	ch <- prometheus.MustNewConstMetric(c.filtered, prometheus.CounterValue, float64(st.FiltersFound), "found")
	ch <- prometheus.MustNewConstMetric(c.filtered, prometheus.CounterValue, float64(st.FiltersMissed), "missed")
}

// NewJobsCollector reports the job router: jobs by domain and state, and
// over the last 24 hours CPU efficiency and the utilization of the box's
// cores per class.
func NewJobsCollector(svc *jobs.Service) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "jobs", name), help, labels, nil)
	}
	return &jobsCollector{svc: svc,
		jobs:       d("count", "Jobs by domain (\"none\" before placement) and state.", "domain", "state"),
		efficiency: d("cpu_efficiency_24h", "CPU time ÷ core wall time of the jobs that ended in the last 24 h, by class.", "class"),
		wallUtil:   d("wall_utilization_24h", "Core wall time of local jobs ÷ the local cores' time over the last 24 h, by class.", "class"),
		cpuUtil:    d("cpu_utilization_24h", "CPU time of local jobs ÷ the local cores' time over the last 24 h, by class.", "class"),
	}
}

type jobsCollector struct {
	svc                                 *jobs.Service
	jobs, efficiency, wallUtil, cpuUtil *prometheus.Desc
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.jobs, c.efficiency, c.wallUtil, c.cpuUtil} {
		ch <- d
	}
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	for domain, byState := range c.svc.Counts() {
		if domain == "" {
			domain = "none"
		}
		for st, n := range byState {
			ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(n), domain, string(st))
		}
	}
	r := c.svc.Report(time.Now().Add(-24 * time.Hour))
	for _, row := range r.Rows {
		ch <- prometheus.MustNewConstMetric(c.efficiency, prometheus.GaugeValue, row.Efficiency, row.Class)
		if row.LocalCounted {
			ch <- prometheus.MustNewConstMetric(c.wallUtil, prometheus.GaugeValue, row.WallUtil, row.Class)
			ch <- prometheus.MustNewConstMetric(c.cpuUtil, prometheus.GaugeValue, row.CPUUtil, row.Class)
		}
	}
}
