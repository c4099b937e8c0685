package config

import (
	"sitebox/internal/origin"
	"sitebox/internal/problem"
)

// Validate returns every problem in c (with defaults applied or not). It
// looks at the disk only to check that named files and directories exist,
// since a missing pool is the most common first-day mistake.
func (c *Config) Validate() []Problem {
	var ps []Problem
	ps = append(ps, c.Server.Validate()...)
	ps = append(ps, c.TPC.Validate()...)
	ps = append(ps, c.Root.Validate()...)
	ps = append(ps, c.HTTPS.Validate()...)
	ps = append(ps, c.Exports.Validate()...)
	ps = append(ps, c.Cache.Validate(exportPrefixes(c.Exports))...)
	ps = append(ps, c.Director.Validate()...)
	ps = append(ps, c.Advertise.Validate()...)
	ps = append(ps, c.Auth.Validate()...)
	ps = append(ps, c.validateJobs()...)
	ps = append(ps, c.Probe.Validate()...)
	ps = append(ps, c.crossProblems()...)
	ps = append(ps, c.proxyProblems()...)
	if len(c.Exports) == 0 && !c.Cache.Enabled() && !c.Director.Enabled && !c.Jobs.Enabled {
		ps = append(ps, Problem{Msg: "nothing to serve: add at least one [[export]] (or --export PREFIX=DIR), [[cache.route]] (or --cache PREFIX=URL), [director] enabled = true or [jobs] enabled = true"})
	}
	if c.Jobs.Enabled && !c.Auth.Enabled() && !c.Auth.Kerberos.Enabled() {
		ps = append(ps, Problem{Key: "jobs.enabled", Msg: "the job router needs tokens to know who submits: add [[auth.issuer]], [auth] site_issuer = true or [auth.kerberos]"})
	}
	if c.Jobs.Enabled && c.HTTPS.Addr == Off {
		ps = append(ps, Problem{Key: "jobs.enabled", Msg: "the submit API is served over https://: [https] addr must not be \"off\""})
	}
	return append(ps, c.directorListenerProblems()...)
}

// directorListenerProblems checks where a director listens: a box that
// also serves data gives the director listeners of its own, so that the
// director's redirects to the box's origin and cache reach listeners
// that serve the data rather than the director again.
func (c *Config) directorListenerProblems() []Problem {
	var ps []Problem
	d := &c.Director
	for _, k := range []struct{ key, addr string }{{"director.root_addr", d.RootAddr}, {"director.https_addr", d.HTTPSAddr}} {
		if msg := problem.CheckAddr(k.addr); msg != "" {
			ps = append(ps, Problem{Key: k.key, Msg: msg})
		}
	}
	switch {
	case !d.Enabled && d.OwnListeners():
		ps = append(ps, Problem{Key: "director.root_addr", Msg: "set, but [director] enabled is not true: remove root_addr and https_addr, or enable the director"})
	case d.Enabled && !d.OwnListeners() && (len(c.Exports) > 0 || c.Cache.Enabled()):
		ps = append(ps, Problem{Key: "director.enabled", Msg: "this box also serves data ([[export]] or [cache]): give the director listeners of its own, e.g. [director] root_addr = \":1095\" and https_addr = \":8444\" (clients and remote boxes use those; [root] and [https] serve the box's origin and cache, where the director sends them)"})
	case d.Enabled && d.OwnListeners() && offOrUnset(d.RootAddr) && offOrUnset(d.HTTPSAddr):
		ps = append(ps, Problem{Key: "director.root_addr", Msg: "root_addr and https_addr are both off: the director would have no listener"})
	case d.Enabled && d.OwnListeners() && (len(c.Exports) > 0 || c.Cache.Enabled()) && c.Root.Addr == Off:
		// The director asks its holders over root:// which of them has a file.
		ps = append(ps, Problem{Key: "root.addr", Msg: "off, but this box's director finds files on its own origin and cache over root://: give [root] an address"})
	}
	if (d.RootURL != "" || d.HTTPSURL != "") && !d.OwnListeners() {
		ps = append(ps, Problem{Key: "director.root_url", Msg: "root_url and https_url describe the director's own listeners (root_addr, https_addr); a director on [root] and [https] uses [advertise] root_url and https_url"})
	}
	return ps
}

func offOrUnset(addr string) bool { return addr == "" || addr == Off }

// exportPrefixes are the exported prefixes, in file order.
func exportPrefixes(exports []origin.Export) []string {
	ps := make([]string, len(exports))
	for i, e := range exports {
		ps[i] = e.Prefix
	}
	return ps
}
