package jobs

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"sitebox/internal/jobs/local"
)

// Deps are what the job router takes from the box besides its Settings.
type Deps struct {
	Log *slog.Logger
	// StateDir is the box's own directory (made 0700: jobs run as slot
	// users); the queue database lives in it.
	StateDir string
	// Self is the sitebox binary local jobs are supervised by (`job-exec`);
	// default: this executable.
	Self string
	// LegacyIssuer owns the local-user records written before jobs kept
	// their issuer (the site issuer; "" for none).
	LegacyIssuer string
	// Stager fetches inputs and delivers outputs (nil: none possible).
	Stager Stager
	// Backend makes the backend of a configured domain; the backends live
	// in their own packages, which build on this one.
	Backend func(DomainSettings) (Backend, error)
	// Tick and PollEvery pace the scheduler and the polls of other
	// domains (defaults 250 ms and 3 s; tests shorten them).
	Tick, PollEvery time.Duration
}

// New makes the job router of a box from its [jobs] section (with
// Defaults applied and Validate passed): it looks up the slot users,
// makes the state dir the box's alone, opens the queue and recovers the
// jobs it holds. Nothing runs until Run; Close releases the database.
func New(cfg Settings, deps Deps) (*Service, error) {
	st, err := resolve(cfg, deps)
	if err != nil {
		return nil, err
	}
	// Jobs run as slot users: the state dir (keys, databases) is the
	// box's alone.
	if err := os.Chmod(deps.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("jobs: make the state dir the box's alone: %w", err)
	}
	for _, d := range cfg.Domains {
		if deps.Backend == nil {
			return nil, fmt.Errorf("jobs.domain %s: no backend for domains of type %q", d.Name, d.Type)
		}
		be, err := deps.Backend(d)
		if err != nil {
			return nil, fmt.Errorf("jobs.domain %s: %w", d.Name, err)
		}
		st.Domains = append(st.Domains, Domain{Name: d.Name, Backend: be, MaxJobs: d.MaxJobs, MaxIdleJobs: d.MaxIdleJobs, Sites: d.Sites, Attributes: d.Attributes})
	}
	return newService(st, deps.Log)
}

// resolve gathers what a Service runs by: cfg as decoded, the slot
// users looked up, and deps.
func resolve(cfg Settings, deps Deps) (svcConfig, error) {
	self := deps.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return svcConfig{}, fmt.Errorf("jobs: %w", err)
		}
	}
	slots, err := local.LookupSlots(cfg.SlotUsers)
	if err != nil {
		return svcConfig{}, fmt.Errorf("jobs.slot_users: %w", err)
	}
	st := svcConfig{
		Dir: cfg.Dir, DBPath: filepath.Join(deps.StateDir, "jobs.db"),
		CPUs: cfg.CPUs, GridMaxCPUs: cfg.GridMaxCPUs, Self: self, Shares: cfg.Shares,
		Slots: slots, LegacyIssuer: deps.LegacyIssuer, Stager: deps.Stager,
		Tick: deps.Tick, PollEvery: deps.PollEvery, LocalSites: cfg.Sites,
		MemoryMB: cfg.Memory.Bytes() >> 20, HalfLife: cfg.HalfLife.D(), PreemptGrace: cfg.PreemptGrace.D(),
		Retention: time.Duration(cfg.SandboxRetention), // Forever is negative, as Retention wants
	}
	return st, nil
}
