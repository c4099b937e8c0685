// Package doctor checks a box's setup from its config — listeners,
// addresses, peers, certificates, disks, the batch system — and explains
// each finding in plain words with the fix, so an operator without
// network or storage training can get a Tier-3 box right on the first day.
//
// Every effect on the world (dialing, resolving, interfaces, statfs,
// HTTP, the clock, commands, file writes) goes through Options, so each
// check is tested with the situation it is meant to find.
package doctor

import (
	"context"
	"sync"

	"sitebox/internal/config"
)

// Status is the outcome of one check.
type Status string

// The outcomes, from best to worst; skip means the check did not apply.
const (
	StatusOK    Status = "ok"
	StatusSkip  Status = "skip"
	StatusWarn  Status = "warn"
	StatusError Status = "error"
)

// Check is one finding. Summary says what was found, with the numbers;
// Explain says why it matters, in words an operator without network or
// storage training can follow; Fix says what to do.
type Check struct {
	Group   string `json:"group"`
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Summary string `json:"summary"`
	Explain string `json:"explain,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// Report is every finding, in a fixed order (by group, then as found).
type Report struct {
	Checks []Check `json:"checks"`
}

// ExitCode is 0 when all is well, 1 with warnings, 2 with errors, so
// scripts and monitoring can act on the worst finding.
func (r *Report) ExitCode() int {
	code := 0
	for _, c := range r.Checks {
		switch c.Status {
		case StatusError:
			return 2
		case StatusWarn:
			code = 1
		}
	}
	return code
}

// group is a named set of findings made by one check function.
type group struct {
	name string
	fn   func(ctx context.Context, cfg *config.Config, o *Options) []Check
}

// Run checks the box described by cfg (defaults applied) and returns the
// findings. The checks run in parallel, since most of them wait on the
// network or a disk; each bounds its own waits by opts.Timeout, and all
// return early when ctx ends.
func Run(ctx context.Context, cfg *config.Config, opts Options) *Report {
	o := opts.withDefaults()
	groups := []group{
		{"Config", checkConfig},
		{"Ports", checkPorts},
		{"This box on its ports", checkIdentity},
		{"Addresses", checkAddresses},
		{"Directors and token issuers", checkPeers},
		{"Certificate", checkCertificate},
		{"X.509 credentials", checkX509},
		{"X.509 proxies toward upstreams", checkProxies},
		{"Free space", checkSpace},
		{"Writable directories", checkWritable},
		{"Cache disk speed", checkDiskSpeed},
		{"Slurm", checkSlurm},
	}
	found := make([][]Check, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			cs := g.fn(ctx, cfg, o)
			for j := range cs {
				cs[j].Group = g.name
			}
			found[i] = cs
		})
	}
	wg.Wait()
	r := &Report{}
	for _, cs := range found {
		r.Checks = append(r.Checks, cs...)
	}
	return r
}

// checkConfig reports the problems the config loader found, so the
// doctor still examines a box whose file has mistakes (a missing pool,
// say) but puts those mistakes first.
func checkConfig(_ context.Context, _ *config.Config, o *Options) []Check {
	name := o.ConfigName
	if name == "" {
		name = "the defaults (no --config)"
	}
	if len(o.ConfigProblems) == 0 {
		return []Check{{Name: name, Status: StatusOK, Summary: "no problems in the settings"}}
	}
	ps := &config.Problems{File: name, List: o.ConfigProblems}
	return []Check{{
		Name:    name,
		Status:  StatusError,
		Summary: ps.Error(),
		Explain: "sitebox serve refuses to start with these problems; the checks below use the settings as written.",
		Fix:     "Correct each named line (sitebox config check FILE lists them again).",
	}}
}
