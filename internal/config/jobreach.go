package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"sitebox/internal/jobs/local"
)

// A box's jobs run on its own machine as unprivileged accounts. Tokens
// decide what a job may read through the box; the disk must not undo
// that: a pool, the cache or a secret the accounts can read is open to
// every job, whatever its token allows.

// keptPath is a path the box keeps from its jobs and the setting that
// names it.
type keptPath struct {
	key, path string
	what      string // what a job would get, for the message
}

// keptFromJobs are the paths a jobs box keeps out of its jobs' reach:
// every export pool, the cache dir, and the secrets a job could steal.
func (c *Config) keptFromJobs() []keptPath {
	var out []keptPath
	for i, e := range c.Exports {
		for _, p := range e.Pools {
			out = append(out, keptPath{fmt.Sprintf("export[%d].pools", i+1), p, "every file of export " + e.Prefix + ", whatever its token allows"})
		}
	}
	if c.Cache.Enabled() && c.Cache.Dir != "" {
		out = append(out, keptPath{"cache.dir", c.Cache.Dir, "every cached file, whatever its token allows"})
	}
	secret := func(key, path, what string) {
		if path != "" {
			out = append(out, keptPath{key, path, what})
		}
	}
	secret("https.key", c.HTTPS.Key, "the box's TLS key")
	secret("cache.upstream_token_file", c.Cache.UpstreamTokenFile, "the cache's token")
	secret("cache.upstream_proxy_file", c.Cache.UpstreamProxyFile, "the cache's X.509 proxy")
	secret("tpc.proxy_file", c.TPC.ProxyFile, "the box's X.509 proxy for copies")
	secret("jobs.stage_token_file", c.Jobs.StageTokenFile, "the box's staging token")
	for i, d := range c.Jobs.Domains {
		secret(fmt.Sprintf("jobs.domain[%d].token_file", i+1), d.TokenFile, "the token of domain "+d.Name)
	}
	secret("auth.kerberos.keytab", c.Auth.Kerberos.Keytab, "the box's Kerberos keys")
	return out
}

// jobAccount is an account jobs run as, and what makes it one.
type jobAccount struct {
	local.Account
	kind string // "slot user" or "run_as account"
}

func (c *Config) jobAccounts() []jobAccount {
	var out []jobAccount
	for _, a := range local.JobAccounts(c.Jobs.SlotUsers, nil) {
		out = append(out, jobAccount{a, "slot user"})
	}
	var runAs []string
	for _, d := range c.Jobs.Domains {
		if d.Type == "slurm" && d.RunAs != "" {
			runAs = append(runAs, d.RunAs)
		}
	}
	for _, a := range local.JobAccounts(nil, runAs) {
		out = append(out, jobAccount{a, "run_as account"})
	}
	return out
}

// JobReadable names every pool, cache dir and secret file of a jobs box
// that an account its jobs run as could read (POSIX permission bits;
// access control lists are not looked at), with the command that closes
// it. Paths inside the state dir are left out: the job router makes it
// the box's alone. Missing paths and unknown accounts are left to the
// checks that name them.
func (c *Config) JobReadable() []Problem {
	if !c.Jobs.Enabled {
		return nil
	}
	accounts := c.jobAccounts()
	state := resolved(c.Server.StateDir)
	var ps []Problem
	for _, k := range c.keptFromJobs() {
		for _, a := range accounts {
			ac, err := local.Reach(k.path, a.Account)
			if err != nil || !ac.Reachable() || (state != "" && within(ac.Path, state)) {
				continue
			}
			msg := fmt.Sprintf("%s %s can read %s (mode %#o, %s): every job could read %s; %s",
				a.kind, a.Name, ac.Path, ac.Mode, reachedBy(ac.By), k.what, ac.Fix(a.Account))
			ps = append(ps, Problem{Key: k.key, Msg: msg})
			break // one account is enough to name the path
		}
	}
	return ps
}

// reachedBy says whose permission bits let an account in.
func reachedBy(by string) string {
	switch by {
	case "others":
		return "open to others"
	case "group":
		return "open to a group it is in"
	}
	return "it owns it"
}

// resolved is dir absolute with its links resolved, "" if it cannot be.
func resolved(dir string) string {
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return ""
	}
	return real
}

// within reports whether p (absolute, clean) is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
