package jobs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sitebox/internal/problem"
	"sitebox/internal/units"
)

// Settings are the [jobs] section of the box's config, decoded straight
// into these fields: the domains jobs may run in and how the box's own
// cores (the "local" domain) are shared. Defaults fills in what is unset
// and Validate says what is wrong; New takes them as they are. A size or
// duration tagged nonzero is unset at 0, so the config's type check
// refuses a 0 in the file.
type Settings struct {
	// Enabled turns the role on (the submit API on https://).
	Enabled bool `toml:"enabled"`
	// Dir holds sandboxes (default <state_dir>-jobs, beside the state dir,
	// which is the box's alone); the queue database lives in the state
	// dir. Slot users must be able to search every directory above it.
	Dir string `toml:"dir"`
	// SlotUsers are the unprivileged accounts local jobs run as, one
	// running job each (HTCondor's slot users); required. Make them with
	// useradd --system, use them for nothing else, and give each box its
	// own: whatever a slot user runs is killed, and whatever it owns in
	// /tmp, /var/tmp, /dev/shm and the like removed, when its job ends.
	SlotUsers []string `toml:"slot_users"`
	// CPUs and Memory of the local domain (defaults: all cores, 80 % of RAM).
	CPUs   int        `toml:"cpus"`
	Memory units.Size `toml:"memory" nonzero:""`
	// GridMaxCPUs caps the local CPUs jobs from outside the site may hold
	// (default: all); local users always come first.
	GridMaxCPUs int `toml:"grid_max_cpus"`
	// LocalIssuers are token issuers whose users are local (the site
	// issuer always is); everyone else is a grid user.
	LocalIssuers []string `toml:"local_issuers"`
	// HalfLife of the decaying usage fair share is computed from
	// (default "24h").
	HalfLife units.Duration `toml:"half_life" nonzero:""`
	// Shares weigh users (by token subject, or "vo:cms" for a whole VO)
	// in fair share; unlisted ones weigh 1.
	Shares map[string]float64 `toml:"shares"`
	// PreemptGrace is how long a preempted backfill job has between
	// SIGTERM and SIGKILL (default "30s").
	PreemptGrace units.Duration `toml:"preempt_grace" nonzero:""`
	// Sites are the grid site names the box's own cores (the local
	// domain) serve, for +DESIRED_Sites.
	Sites []string `toml:"sites"`
	// SandboxRetention is how long an ended job's sandbox (logs, outputs
	// for `sitebox fetch`) is kept before it is removed (default "168h";
	// "forever" keeps them).
	SandboxRetention Retention `toml:"sandbox_retention"`
	// Cache is the site cache when it is another server, e.g.
	// "roots://t3-cache.example.org:1094": federation paths are read
	// there, and URLs too, by their path. Unset (or naming the box
	// itself), the box's own namespace is the site's.
	Cache string `toml:"cache"`
	// StageTokenFile is the box's own bearer token for Cache (roots:// or
	// https:// only), used for a job only where the box's namespace
	// rules let the job's owner reach the path.
	StageTokenFile string `toml:"stage_token_file"`
	// StageCA is an extra CA for https:// and roots:// staging.
	StageCA string `toml:"stage_ca"`
	// Domains besides "local": the site's batch system, partner boxes.
	Domains []DomainSettings `toml:"domain"`
}

// DomainSettings are one place jobs can be sent ([[jobs.domain]]).
type DomainSettings struct {
	Name string `toml:"name"`
	// Type is "slurm", "box" (another sitebox's local domain) or
	// "htcondor".
	Type string `toml:"type"`
	// MaxJobs and MaxIdleJobs cap what the router keeps in the domain, as
	// HTCondor's job router does (defaults 100 and 10).
	MaxJobs     int `toml:"max_jobs"`
	MaxIdleJobs int `toml:"max_idle_jobs"`
	// Slurm: the partition (default: the cluster's default) and the
	// slurm.conf (default: Slurm's own).
	Partition string `toml:"partition"`
	SlurmConf string `toml:"slurm_conf"`
	// RunAs is the unprivileged account Slurm jobs run as (required for
	// Slurm: jobs never run as the box's user).
	RunAs string `toml:"run_as"`
	// Box: the partner's https URL, a CA for its certificate and the
	// token this box presents there.
	URL       string `toml:"url"`
	CA        string `toml:"ca"`
	TokenFile string `toml:"token_file"`
	// Sites are the grid site names the domain runs jobs for, so a
	// submit file's +DESIRED_Sites = "T2_US_MIT" reaches it.
	Sites []string `toml:"sites"`
	// Attributes describe the domain's machines for submit files'
	// requirements and rank: OpSys, Arch (strings), Cpus, Memory (MB),
	// e.g. { OpSys = "LINUX", Arch = "X86_64", Memory = 64000 }. The box
	// cannot see them itself; unset ones never match a requirement.
	Attributes map[string]any `toml:"attributes"`
}

// Defaults fills in unset settings; the sandboxes go beside stateDir.
func (j *Settings) Defaults(stateDir string) {
	if !j.Enabled {
		return
	}
	if j.Dir == "" {
		j.Dir = filepath.Clean(stateDir) + "-jobs"
	}
	if j.HalfLife == 0 {
		j.HalfLife = units.Duration(defaultHalfLife)
	}
	if j.PreemptGrace == 0 {
		j.PreemptGrace = units.Duration(defaultPreemptGrace)
	}
	if j.SandboxRetention == 0 {
		j.SandboxRetention = Retention(defaultRetention)
	}
	for i := range j.Domains {
		d := &j.Domains[i]
		if d.MaxJobs == 0 {
			d.MaxJobs = 100
		}
		if d.MaxIdleJobs == 0 {
			d.MaxIdleJobs = 10
		}
	}
}

// inside reports whether dir is base or below it.
func inside(dir, base string) bool {
	if dir == "" || base == "" {
		return false
	}
	d, err1 := filepath.Abs(dir)
	b, err2 := filepath.Abs(base)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(b, d)
	return err == nil && (rel == "." || (rel != ".." && !strings.HasPrefix(rel, "../")))
}

// Validate returns every problem in j, keyed as in the file (e.g.
// "jobs.domain[1].run_as"); stateDir is the box's ([server] state_dir),
// which the sandboxes must stay out of. It looks at the disk only to
// check that named files exist.
func (j *Settings) Validate(stateDir string) []problem.Problem {
	l := &problem.List{Section: "jobs"}
	add := l.Add
	if !j.Enabled {
		if len(j.Domains) > 0 {
			add("enabled", "domains are configured but the job router is not enabled (enabled = true)")
		}
		return l.All
	}
	if len(j.SlotUsers) == 0 {
		add("slot_users", "jobs never run as the box's user: set [jobs] slot_users to unprivileged accounts, e.g. slot_users = [\"sbxslot1\", \"sbxslot2\"] (useradd --system --no-create-home sbxslot1)")
	}
	if inside(j.Dir, stateDir) {
		add("dir", "%s is inside the state dir %s, which is the box's alone (mode 0700): jobs could not reach their sandboxes; choose a directory beside it", j.Dir, stateDir)
	}
	for who, w := range j.Shares {
		if w <= 0 {
			add("shares."+who, "%v: a share must be above 0", w)
		}
	}
	if j.CPUs < 0 {
		add("cpus", "%d: must be at least 1 (or unset for all cores)", j.CPUs)
	}
	if j.GridMaxCPUs < 0 {
		add("grid_max_cpus", "%d: must be 0 (no cap) or more", j.GridMaxCPUs)
	}
	if j.Memory < 0 {
		add("memory", "%d is not a size (e.g. \"16GiB\")", j.Memory.Bytes())
	}
	for _, k := range []struct {
		key string
		v   units.Duration
	}{{"half_life", j.HalfLife}, {"preempt_grace", j.PreemptGrace}} {
		if k.v < 0 {
			add(k.key, "%q is not a positive duration (e.g. \"24h\")", k.v)
		}
	}
	if r := j.SandboxRetention; r < 0 && r != Forever {
		add("sandbox_retention", "%q is not a positive duration (e.g. \"168h\") or \"forever\"", time.Duration(r))
	}
	if j.Cache != "" {
		if msg := problem.CheckURL(j.Cache, "root", "roots", "https", "http"); msg != "" {
			add("cache", "%s", msg)
		}
	}
	for _, f := range []struct{ key, path string }{{"stage_token_file", j.StageTokenFile}, {"stage_ca", j.StageCA}} {
		if f.path != "" {
			if msg := problem.Readable(f.path); msg != "" {
				add(f.key, "%s", msg)
			}
		}
	}
	j.validateDomains(add)
	return l.All
}

// validateDomains checks the [[jobs.domain]] tables.
func (j *Settings) validateDomains(add func(key, format string, args ...any)) {
	seen := map[string]bool{"local": true}
	for i, d := range j.Domains {
		key := fmt.Sprintf("domain[%d]", i+1)
		switch {
		case d.Name == "":
			add(key+".name", "missing")
		case seen[d.Name]:
			add(key+".name", "%q is defined twice (\"local\" is the box's own cores)", d.Name)
		}
		seen[d.Name] = true
		switch d.Type {
		case "slurm":
			if d.RunAs == "" {
				add(key+".run_as", "jobs never run as the box's user: set run_as to the unprivileged account Slurm jobs run as")
			}
			if slices.Contains(j.SlotUsers, d.RunAs) {
				add(key+".run_as", "%q is also a slot user: its processes are killed whenever a local job in that slot ends; use an account of its own", d.RunAs)
			}
		case "htcondor":
		case "box":
			if msg := problem.CheckURL(d.URL, "https", "http"); msg != "" {
				add(key+".url", "%s", msg)
			}
		default:
			add(key+".type", "%q is not a domain type (use slurm, box or htcondor)", d.Type)
		}
		for _, msg := range checkDomainAttributes(d.Attributes) {
			add(key+".attributes", "%s", msg)
		}
		if d.MaxJobs < 0 || d.MaxIdleJobs < 0 {
			add(key+".max_jobs", "caps must not be negative")
		}
		for _, f := range []struct{ key, path string }{{"ca", d.CA}, {"token_file", d.TokenFile}, {"slurm_conf", d.SlurmConf}} {
			if f.path != "" {
				if msg := problem.Readable(f.path); msg != "" {
					add(key+"."+f.key, "%s", msg)
				}
			}
		}
	}
}
