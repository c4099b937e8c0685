package config

import (
	"fmt"
	"strings"
	"time"

	"sitebox/internal/config/check"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// Director configures the director (redirector) role: it keeps a registry
// of the servers that advertise to it, finds which of them holds a path,
// and redirects clients there; what none holds goes to the site's cache,
// the parent director, or the VO's federation.
type Director struct {
	// Enabled turns the role on.
	Enabled bool `toml:"enabled"`
	// LocateTimeout bounds one search across the candidate servers
	// (default "3s").
	LocateTimeout string `toml:"locate_timeout"`
	// CacheTTL and NegativeTTL keep found and not-found answers
	// (defaults "60s" and "10s").
	CacheTTL    string `toml:"cache_ttl"`
	NegativeTTL string `toml:"negative_ttl"`
	// DropAfter is how many advertisement intervals a server may miss
	// before it is dropped (default 3).
	DropAfter int `toml:"drop_after"`
	// Parents are directors above this one (root:// URLs), asked for what
	// this director's servers do not hold, in order.
	Parents []string `toml:"parents"`
	// DefaultVO is the VO of clients that name none (no token group, no
	// ?vo=).
	DefaultVO string `toml:"default_vo"`
	// VO maps a VO to its federation's redirector, the last resort:
	// cms = "root://cms-xrd-global.cern.ch:1094".
	VO map[string]string `toml:"vo"`
	// Servers are plain XRootD servers that cannot advertise: listed here
	// and probed.
	Servers []StaticServer `toml:"server"`
	// Members are boxes allowed to advertise, for sites that manage their
	// config (the others approve with `sitebox federation approve`, which
	// records members in the state dir). A box advertises only with its
	// federation key; see Member.
	Members []Member `toml:"member"`
	// MaxServers bounds the registry (default 10000).
	MaxServers int `toml:"max_servers"`
}

// Member is a box the director accepts advertisements from, as
// `sitebox federation join` on the box prints it.
type Member struct {
	Name string `toml:"name"`
	// Site, if set, is the only site it may claim.
	Site string `toml:"site"`
	// Key is the box's federation public key ("ed25519:…").
	Key string `toml:"key"`
	// Roles it may advertise: origin, cache, director.
	Roles []string `toml:"roles"`
	// Prefixes it may claim (a director: for the servers below it too).
	Prefixes []string `toml:"prefixes"`
	// Root (root://host:port) and HTTPS (https://host:port) are the only
	// endpoints it may advertise.
	Root  string `toml:"root"`
	HTTPS string `toml:"https"`
}

// StaticServer is a server the director knows from its config.
type StaticServer struct {
	Name     string   `toml:"name"`
	Site     string   `toml:"site"`
	Root     string   `toml:"root"`  // root://host:port
	HTTPS    string   `toml:"https"` // https://host:port, optional
	Prefixes []string `toml:"prefixes"`
	// Role is "origin" (default) or "cache".
	Role string `toml:"role"`
}

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

func (d *Director) applyDefaults() {
	if d.LocateTimeout == "" {
		d.LocateTimeout = "3s"
	}
	if d.CacheTTL == "" {
		d.CacheTTL = "60s"
	}
	if d.NegativeTTL == "" {
		d.NegativeTTL = "10s"
	}
	if d.DropAfter == 0 {
		d.DropAfter = 3
	}
	for i := range d.Servers {
		if d.Servers[i].Role == "" {
			d.Servers[i].Role = "origin"
		}
	}
}

func (a *Advertise) applyDefaults() {
	if a.Interval == "" {
		a.Interval = "10s"
	}
}

func (d *Director) validate() []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: "director." + key, Msg: fmt.Sprintf(format, args...)})
	}
	for _, k := range []struct{ key, v string }{{"locate_timeout", d.LocateTimeout}, {"cache_ttl", d.CacheTTL}, {"negative_ttl", d.NegativeTTL}} {
		if k.v == "" {
			continue
		}
		if dur, err := time.ParseDuration(k.v); err != nil || dur <= 0 {
			add(k.key, "%q is not a duration (e.g. \"3s\")", k.v)
		}
	}
	if d.DropAfter < 0 {
		add("drop_after", "%d: must be at least 1", d.DropAfter)
	}
	for i, p := range d.Parents {
		if msg := checkURL(p, "root"); msg != "" {
			add(fmt.Sprintf("parents[%d]", i+1), "%s", msg)
		}
	}
	for vo, u := range d.VO {
		if msg := checkURL(u, "root", "https"); msg != "" {
			add("vo."+vo, "%s", msg)
		}
	}
	if d.DefaultVO != "" && d.VO[d.DefaultVO] == "" {
		add("default_vo", "%q has no entry in [director.vo]", d.DefaultVO)
	}
	for i, s := range d.Servers {
		key := fmt.Sprintf("server[%d]", i+1)
		if s.Name == "" {
			add(key+".name", "missing")
		}
		if msg := checkURL(s.Root, "root"); msg != "" {
			add(key+".root", "%s", msg)
		}
		if s.HTTPS != "" {
			if msg := checkURL(s.HTTPS, "https"); msg != "" {
				add(key+".https", "%s", msg)
			}
		}
		if len(s.Prefixes) == 0 {
			add(key+".prefixes", "missing: the namespace prefixes the server holds, e.g. [\"/store\"]")
		}
		for _, p := range s.Prefixes {
			if c, err := store.CleanPath(p); err != nil || c != p {
				add(key+".prefixes", "%q must be a clean absolute namespace path", p)
			}
		}
		if s.Role != "" && s.Role != "origin" && s.Role != "cache" {
			add(key+".role", "%q is not a role (use \"origin\" or \"cache\")", s.Role)
		}
	}
	if d.MaxServers < 0 {
		add("max_servers", "%d: must be positive", d.MaxServers)
	}
	seen := map[string]bool{}
	for i, m := range d.Members {
		key := fmt.Sprintf("member[%d]", i+1)
		if m.Name == "" || seen[m.Name] {
			add(key+".name", "%q: missing or given twice", m.Name)
		}
		seen[m.Name] = true
		if !strings.HasPrefix(m.Key, "ed25519:") {
			add(key+".key", "%q is not a key like \"ed25519:…\" (from `sitebox federation join`)", m.Key)
		}
		for _, r := range m.Roles {
			if r != "origin" && r != "cache" && r != "director" {
				add(key+".roles", "%q is not a role (origin, cache or director)", r)
			}
		}
		if len(m.Roles) == 0 {
			add(key+".roles", "missing, e.g. [\"origin\"]")
		}
		if len(m.Prefixes) == 0 {
			add(key+".prefixes", "missing: the prefixes it may claim, e.g. [\"/store\"]")
		}
		for _, p := range m.Prefixes {
			if c, err := store.CleanPath(p); err != nil || c != p {
				add(key+".prefixes", "%q must be a clean absolute namespace path", p)
			}
		}
		if m.Root == "" && m.HTTPS == "" {
			add(key+".root", "missing: a member needs root or https")
		}
		if m.Root != "" {
			if msg := checkURL(m.Root, "root"); msg != "" {
				add(key+".root", "%s", msg)
			}
		}
		if m.HTTPS != "" {
			if msg := checkURL(m.HTTPS, "https", "http"); msg != "" {
				add(key+".https", "%s", msg)
			}
		}
	}
	return ps
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
func checkURL(s string, schemes ...string) string { return check.URL(s, schemes...) }

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
