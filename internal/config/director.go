package config

import (
	"fmt"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
)

// Advertise makes this box announce itself to directors.
type Advertise struct {
	// To are the directors' https:// URLs.
	To []string `toml:"to"`
	// Interval between advertisements (default "10s").
	Interval string `toml:"interval"`
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

func (a *Advertise) applyDefaults() {
	if a.Interval == "" {
		a.Interval = "10s"
	}
}

func (a *Advertise) validate() []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: "advertise." + key, Msg: fmt.Sprintf(format, args...)})
	}
	for i, u := range a.To {
		if msg := checkURL(u, "https", "http"); msg != "" {
			add(fmt.Sprintf("to[%d]", i+1), "%s", msg)
		}
	}
	if a.Interval != "" {
		if d, err := time.ParseDuration(a.Interval); err != nil || d < 100*time.Millisecond {
			add("interval", "%q is not a duration of at least 100ms", a.Interval)
		}
	}
	if a.RootURL != "" {
		if msg := checkURL(a.RootURL, "root"); msg != "" {
			add("root_url", "%s", msg)
		}
	}
	if a.HTTPSURL != "" {
		if msg := checkURL(a.HTTPSURL, "https", "http"); msg != "" {
			add("https_url", "%s", msg)
		}
	}
	return ps
}

// checkURL explains what is wrong with a server URL, or returns "".
func checkURL(s string, schemes ...string) string { return problem.CheckURL(s, schemes...) }

// Probe configures the throughput probes a box makes to the other boxes
// of its directors' fleet, reported with its advertisements, from which
// a director builds the site-to-site matrix (`sitebox bench matrix`).
type Probe struct {
	// Interval between two rounds of probes ("" or "0": none).
	Interval string `toml:"interval"`
	// Size read from each box per probe (default "64MiB").
	Size string `toml:"size"`
}

func (p *Probe) validate() []Problem {
	var ps []Problem
	if p.Interval != "" {
		if d, err := time.ParseDuration(p.Interval); err != nil || d < 0 {
			ps = append(ps, Problem{Key: "probe.interval", Msg: fmt.Sprintf("%q is not a duration (e.g. \"1h\")", p.Interval)})
		}
	}
	if p.Size != "" {
		if n, err := units.ParseSize(p.Size); err != nil || n <= 0 || n > 1<<30 {
			ps = append(ps, Problem{Key: "probe.size", Msg: fmt.Sprintf("%q is not a size up to 1GiB", p.Size)})
		}
	}
	return ps
}
