package metrics

import "github.com/prometheus/client_golang/prometheus"

// sample is one time series read from a snapshot of type S. Several samples
// may share a desc and differ by their label value.
type sample[S any] struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	label string // the value of desc's only variable label, if it has one
	value func(*S) float64
}

// snapshotCollector reports a table of samples from one call to snap per
// scrape. It is safe for concurrent use if snap is.
type snapshotCollector[S any] struct {
	snap    func() S
	samples []sample[S]
}

// Describe sends each desc once, as the registry checks them for clashes.
func (c *snapshotCollector[S]) Describe(ch chan<- *prometheus.Desc) {
	seen := map[*prometheus.Desc]bool{}
	for _, s := range c.samples {
		if !seen[s.desc] {
			seen[s.desc] = true
			ch <- s.desc
		}
	}
}

// Collect takes one snapshot so that related series (hits and misses, used
// and free) are consistent with each other within a scrape.
func (c *snapshotCollector[S]) Collect(ch chan<- prometheus.Metric) {
	snap := c.snap()
	for _, s := range c.samples {
		var labels []string
		if s.label != "" {
			labels = []string{s.label}
		}
		ch <- prometheus.MustNewConstMetric(s.desc, s.typ, s.value(&snap), labels...)
	}
}

// counter and gauge build samples without a label; labeled ones are
// written out where they are used.
func counter[S any](d *prometheus.Desc, v func(*S) float64) sample[S] {
	return sample[S]{desc: d, typ: prometheus.CounterValue, value: v}
}

func gauge[S any](d *prometheus.Desc, v func(*S) float64) sample[S] {
	return sample[S]{desc: d, typ: prometheus.GaugeValue, value: v}
}
