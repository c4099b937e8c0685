package spec

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

func (p *submitParser) wallTime(st submitStmt, v string) {
	if !p.once(st, "walltime") {
		return
	}
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		p.ps.add(st.line, st.key, "%q is not a whole number of seconds", v)
	case n < 1:
		p.ps.add(st.line, st.key, "must be at least 1 second, not %d", n)
	case n > int64(math.MaxInt64/time.Second):
		p.ps.add(st.line, st.key, "%d seconds is too long", n)
	default:
		p.spec.WallTime = time.Duration(n) * time.Second
	}
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}

// jobFlavours are CERN's +JobFlavour names and the wall time each means.
var jobFlavours = map[string]time.Duration{
	"espresso": 20 * time.Minute, "microcentury": time.Hour, "longlunch": 2 * time.Hour,
	"workday": 8 * time.Hour, "tomorrow": 24 * time.Hour, "testmatch": 3 * 24 * time.Hour, "nextweek": 7 * 24 * time.Hour,
}

// jobFlavour reads +JobFlavour = "longlunch" as its wall time.
func (p *submitParser) jobFlavour(st submitStmt, v string) {
	if !p.once(st, "walltime") {
		return
	}
	name, msg := classAdString(v)
	d, ok := jobFlavours[strings.ToLower(name)]
	switch {
	case msg != "":
		p.ps.add(st.line, st.key, "%s", msg)
	case !ok:
		p.ps.add(st.line, st.key, "%q is not a job flavour (espresso, microcentury, longlunch, workday, tomorrow, testmatch, nextweek)", name)
	default:
		p.spec.WallTime = d
	}
}

// desiredSites reads +DESIRED_Sites: each name is a site some of the
// box's domains serve (their sites setting), or a domain's own name.
func (p *submitParser) desiredSites(st submitStmt, v string) {
	if !p.once(st, "domains") {
		return
	}
	s, msg := classAdString(v)
	if msg != "" {
		p.ps.add(st.line, st.key, "%s", msg)
		return
	}
	var domains []string
	for _, site := range splitCommaList(s) {
		var ds []string
		if p.sites != nil {
			ds = p.sites(site)
		}
		if len(ds) == 0 && p.known(site) {
			ds = []string{site}
		}
		if len(ds) == 0 {
			p.ps.add(st.line, st.key, "site %q is served by none of the box's domains (a domain's sites setting names the sites it runs jobs for)", site)
			continue
		}
		for _, d := range ds {
			if !slices.Contains(domains, d) {
				domains = append(domains, d)
			}
		}
	}
	if len(domains) > 0 {
		p.spec.Domains = domains
	}
}
