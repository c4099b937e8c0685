package director

import (
	"fmt"
	"strings"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/store"
	"sitebox/internal/units"
)

// Settings configures the director (redirector) role: it keeps a registry
// of the servers that advertise to it, finds which of them holds a path,
// and redirects clients there; what none holds goes to the site's cache,
// the parent director, or the VO's federation. A duration tagged nonzero
// is unset at 0, so the config's type check refuses a 0 in the file.
type Settings struct {
	// Enabled turns the role on.
	Enabled bool `toml:"enabled"`
	// RootAddr and HTTPSAddr are the director's own root:// and https://
	// listeners, needed when the same box also serves data ([[export]],
	// [cache]): clients and remote boxes talk to the director there,
	// while [root] and [https] serve the box's own origin and cache,
	// where the director sends them. Unset: the director is the only
	// namespace of the box and uses [root] and [https]. "off" disables
	// one of the two.
	RootAddr  string `toml:"root_addr"`
	HTTPSAddr string `toml:"https_addr"`
	// RootURL and HTTPSURL are how clients and other directors reach the
	// director's own listeners when that differs from RootAddr and
	// HTTPSAddr (NAT, a DNS name); default: the listeners, with the
	// hostname for a wildcard address.
	RootURL  string `toml:"root_url"`
	HTTPSURL string `toml:"https_url"`
	// LocateTimeout bounds one search across the candidate servers
	// (default "3s").
	LocateTimeout units.Duration `toml:"locate_timeout" nonzero:""`
	// CacheTTL and NegativeTTL keep found and not-found answers
	// (defaults "60s" and "10s").
	CacheTTL    units.Duration `toml:"cache_ttl" nonzero:""`
	NegativeTTL units.Duration `toml:"negative_ttl" nonzero:""`
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
	Servers []ServerEntry `toml:"server"`
	// Members are boxes allowed to advertise, for sites that manage their
	// config (the others approve with `sitebox federation approve`, which
	// records members in the state dir). A box advertises only with its
	// federation key; see MemberEntry.
	Members []MemberEntry `toml:"member"`
	// MaxServers bounds the registry (default 10000).
	MaxServers int `toml:"max_servers"`
	// DownWait is how long clients asking for a file whose holder is down
	// or in downtime are told to wait (kXR_wait, 503 + Retry-After) before
	// they get an error naming the server (default "30s").
	DownWait units.Duration `toml:"down_wait"`
	// StartupWait is how long a newly started director answers "wait"
	// instead of "not found", until its members have advertised (default
	// "10s", one advertisement interval; "0s" turns it off, hence the
	// pointer: unset is not zero).
	StartupWait *units.Duration `toml:"startup_wait"`
	// CA makes the director its federation's certificate authority: a CA
	// made on first use in the state dir signs the director's own https
	// certificate (unless [https] cert is set) and, at approval, each
	// member's; GET /.sitebox/ca.pem serves the CA file users trust.
	CA bool `toml:"ca"`
	// CADomains and CANetworks are the federation's names: the CA
	// certificate carries them as X.509 name constraints (permitted DNS
	// subtrees, address ranges) and approve refuses member names outside
	// them. Empty: no constraints. A CA made before they were set keeps
	// its own until `sitebox federation reissue-ca`.
	CADomains  []string `toml:"ca_domains"`
	CANetworks []string `toml:"ca_networks"`
}

// NameConstraints are CADomains and CANetworks, read.
func (d *Settings) NameConstraints() (NameConstraints, error) {
	return ParseNameConstraints(d.CADomains, d.CANetworks)
}

// MemberEntry is a box the director accepts advertisements from, as
// `sitebox federation join` on the box prints it ([[director.member]]).
type MemberEntry struct {
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

// ServerEntry is a server the director knows from its config
// ([[director.server]]).
type ServerEntry struct {
	Name     string   `toml:"name"`
	Site     string   `toml:"site"`
	Root     string   `toml:"root"`  // root://host:port
	HTTPS    string   `toml:"https"` // https://host:port, optional
	Prefixes []string `toml:"prefixes"`
	// Role is "origin" (default) or "cache".
	Role string `toml:"role"`
}

// OwnListeners reports whether the director has listeners of its own
// (RootAddr or HTTPSAddr set) instead of the box's [root] and [https].
func (d *Settings) OwnListeners() bool { return d.RootAddr != "" || d.HTTPSAddr != "" }

// Defaults fills unset fields with their documented defaults.
func (d *Settings) Defaults() {
	def := func(v *units.Duration, dflt time.Duration) {
		if *v == 0 {
			*v = units.Duration(dflt)
		}
	}
	def(&d.LocateTimeout, defaultLocateTimeout)
	def(&d.CacheTTL, defaultCacheTTL)
	def(&d.NegativeTTL, defaultNegativeTTL)
	def(&d.DownWait, defaultDownWait)
	if d.DropAfter == 0 {
		d.DropAfter = defaultDropAfter
	}
	if d.StartupWait == nil {
		w := units.Duration(defaultStartupWait)
		d.StartupWait = &w
	}
	for i := range d.Servers {
		if d.Servers[i].Role == "" {
			d.Servers[i].Role = "origin"
		}
	}
}

// Validate returns every problem in d (with defaults applied or not),
// keyed as in the file: "director.locate_timeout".
func (d *Settings) Validate() []problem.Problem {
	ps := &problem.List{Section: "director"}
	add := ps.Add
	for _, k := range []struct {
		key string
		v   units.Duration
	}{{"locate_timeout", d.LocateTimeout}, {"cache_ttl", d.CacheTTL}, {"negative_ttl", d.NegativeTTL}} {
		if k.v < 0 {
			add(k.key, "%q is not a positive duration (e.g. \"3s\")", k.v)
		}
	}
	if d.DownWait < 0 {
		add("down_wait", "%q is not a duration of 0 or more (e.g. \"30s\")", d.DownWait)
	}
	if w := d.StartupWait; w != nil && *w < 0 {
		add("startup_wait", "%q is not a duration of 0 or more (e.g. \"10s\"; \"0s\" turns it off)", *w)
	}
	if d.DropAfter < 0 {
		add("drop_after", "%d: must be at least 1", d.DropAfter)
	}
	for i, p := range d.Parents {
		if msg := problem.CheckURL(p, "root"); msg != "" {
			add(fmt.Sprintf("parents[%d]", i+1), "%s", msg)
		}
	}
	for vo, u := range d.VO {
		if msg := problem.CheckURL(u, "root", "https"); msg != "" {
			add("vo."+vo, "%s", msg)
		}
	}
	if d.DefaultVO != "" && d.VO[d.DefaultVO] == "" {
		add("default_vo", "%q has no entry in [director.vo]", d.DefaultVO)
	}
	for _, k := range []struct {
		key, v  string
		schemes []string
	}{{"root_url", d.RootURL, []string{"root"}}, {"https_url", d.HTTPSURL, []string{"https", "http"}}} {
		if k.v == "" {
			continue
		}
		if msg := problem.CheckURL(k.v, k.schemes...); msg != "" {
			add(k.key, "%s", msg)
		}
	}
	d.validateServers(add)
	if d.MaxServers < 0 {
		add("max_servers", "%d: must be positive", d.MaxServers)
	}
	d.validateMembers(add)
	if _, err := d.NameConstraints(); err != nil {
		key, msg, _ := strings.Cut(err.Error(), ": ")
		add(key, "%s", msg)
	}
	if (len(d.CADomains) > 0 || len(d.CANetworks) > 0) && !d.CA {
		add("ca_domains", "the federation's names constrain its CA: set ca = true too")
	}
	return ps.All
}

// addFunc records a problem under a key relative to [director].
type addFunc func(key, format string, args ...any)

// validateServers checks the [[director.server]] entries.
func (d *Settings) validateServers(add addFunc) {
	for i, s := range d.Servers {
		key := fmt.Sprintf("server[%d]", i+1)
		if s.Name == "" {
			add(key+".name", "missing")
		}
		if msg := problem.CheckURL(s.Root, "root"); msg != "" {
			add(key+".root", "%s", msg)
		}
		if s.HTTPS != "" {
			if msg := problem.CheckURL(s.HTTPS, "https"); msg != "" {
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
}

// validateMembers checks the [[director.member]] entries.
func (d *Settings) validateMembers(add addFunc) {
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
			if msg := problem.CheckURL(m.Root, "root"); msg != "" {
				add(key+".root", "%s", msg)
			}
		}
		if m.HTTPS != "" {
			if msg := problem.CheckURL(m.HTTPS, "https", "http"); msg != "" {
				add(key+".https", "%s", msg)
			}
		}
	}
}
