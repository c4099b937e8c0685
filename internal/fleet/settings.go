package fleet

import (
	"fmt"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
)

// AdvertiseSettings make a box announce itself to directors ([advertise]
// in the config file), read by an Advertiser. Settings tagged nonzero
// are unset at 0, so the config's type check refuses a 0 in the file.
type AdvertiseSettings struct {
	// To are the directors' https:// URLs.
	To []string `toml:"to"`
	// Interval between advertisements (default "10s", at least 100ms).
	Interval units.Duration `toml:"interval" nonzero:""`
	// RootURL and HTTPSURL are how clients reach this box, when they differ
	// from the listen addresses (NAT, a DNS name); default: from the
	// listeners, with the hostname for a wildcard address.
	RootURL  string `toml:"root_url"`
	HTTPSURL string `toml:"https_url"`
	// CA is a PEM file of the directors' CA; Insecure skips verification
	// (tests only).
	CA       string `toml:"ca"`
	Insecure bool   `toml:"insecure"`
}

// DefaultAdInterval is how often a box advertises by default.
const DefaultAdInterval = 10 * time.Second

// Defaults fills unset fields with their documented defaults.
func (a *AdvertiseSettings) Defaults() {
	if a.Interval == 0 {
		a.Interval = units.Duration(DefaultAdInterval)
	}
}

// Validate returns every problem in a, keyed as in the file
// ("advertise.interval").
func (a *AdvertiseSettings) Validate() []problem.Problem {
	l := &problem.List{Section: "advertise"}
	for i, u := range a.To {
		if msg := problem.CheckURL(u, "https", "http"); msg != "" {
			l.Add(fmt.Sprintf("to[%d]", i+1), "%s", msg)
		}
	}
	if a.Interval != 0 && a.Interval.D() < 100*time.Millisecond {
		l.Add("interval", "%q is not a duration of at least 100ms", a.Interval)
	}
	if a.RootURL != "" {
		if msg := problem.CheckURL(a.RootURL, "root"); msg != "" {
			l.Add("root_url", "%s", msg)
		}
	}
	if a.HTTPSURL != "" {
		if msg := problem.CheckURL(a.HTTPSURL, "https", "http"); msg != "" {
			l.Add("https_url", "%s", msg)
		}
	}
	return l.All
}

// ProbeSettings configure the throughput probes a box makes to the
// other boxes of its directors' fleet ([probe]), reported with its
// advertisements, from which a director builds the site-to-site matrix
// (`sitebox bench matrix`); a Prober makes them.
type ProbeSettings struct {
	// Interval between two rounds of probes (unset or "0s": none).
	Interval units.Duration `toml:"interval"`
	// Size read from each box per probe (default "64MiB", at most 1GiB).
	Size units.Size `toml:"size" nonzero:""`
}

// DefaultProbeSize is what a probe reads by default.
const DefaultProbeSize = 64 << 20

// Defaults fills unset fields with their documented defaults.
func (p *ProbeSettings) Defaults() {
	if p.Size == 0 {
		p.Size = DefaultProbeSize
	}
}

// Validate returns every problem in p, keyed as in the file
// ("probe.size").
func (p *ProbeSettings) Validate() []problem.Problem {
	l := &problem.List{Section: "probe"}
	if p.Interval < 0 {
		l.Add("interval", "%q is not a duration of 0 or more (e.g. \"1h\")", p.Interval)
	}
	if p.Size < 0 || p.Size > 1<<30 {
		l.Add("size", "%q is not a size up to 1GiB", p.Size)
	}
	return l.All
}
