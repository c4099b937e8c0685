package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sitebox/internal/jobs/local"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"sitebox/internal/jobs/spec"
)

// svcConfig is what a Service runs by: its Settings, the slot users
// looked up, and its Deps. Zero values take the documented defaults.
type svcConfig struct {
	Dir         string // sandboxes, one directory per job
	DBPath      string // the queue database
	CPUs        int    // local domain (default: all cores)
	MemoryMB    int64  // local domain (default: 80 % of RAM)
	GridMaxCPUs int    // local CPUs grid jobs may hold (0: no cap)
	// HalfLife of the decaying usage behind fair share (default 24 h).
	HalfLife time.Duration
	// Shares weigh owners (by subject for local users, or "vo:<name>")
	// against each other; default 1 each.
	Shares map[string]float64
	// PreemptGrace is SIGTERM to SIGKILL for preempted and cancelled
	// local jobs (default 30 s).
	PreemptGrace time.Duration
	Self         string // the sitebox binary (runs `job-exec`)
	// Slots are the unprivileged accounts local jobs run as, one running
	// job each (HTCondor's slot users). Required: a job never runs as the
	// box's own user.
	Slots []local.Slot
	// LegacyIssuer owns the local-user records written before jobs kept
	// their issuer (the site issuer; "" for none). Grid records of that
	// time are owned by no token: their issuer is unknown.
	LegacyIssuer string
	// Domains are the other places jobs may go, by name, with their caps.
	Domains []Domain
	Stager  Stager // fetches inputs, delivers outputs (nil: none possible)
	// Tick is how often the scheduler runs besides events (default 250 ms).
	Tick time.Duration
	// PollEvery is how often other domains are asked about their jobs
	// (default 3 s).
	PollEvery time.Duration
	// LocalSites are the grid site names the local domain serves.
	LocalSites []string
	// Retention is how long an ended job's sandbox (its logs and outputs
	// for `sitebox fetch`) is kept (default 7 days; negative: forever).
	Retention time.Duration
	// ReleaseRetry is how often the cleanup of a slot held back after a
	// failed one is tried again (default 10 s).
	ReleaseRetry time.Duration
}

// Domain is a non-local domain: its backend and the router's caps on it.
type Domain struct {
	Name        string
	Backend     Backend
	MaxJobs     int      // jobs it may hold in all (0: no cap)
	MaxIdleJobs int      // jobs it may hold waiting (0: no cap)
	Sites       []string // grid site names it serves (+DESIRED_Sites)
	// Attributes are its machines' OpSys, Arch, Cpus, Memory as the
	// operator describes them, for requirements and rank.
	Attributes map[string]any
}

// Stager moves job data between the federation and sandboxes, acting
// for the job's owner with the owner's rights (never the box's own).
type Stager interface {
	// Fetch copies input in to the local file dst.
	Fetch(ctx context.Context, as StageOwner, in spec.Input, dst string) error
	// Deliver writes the local file src as name (a relative path) under
	// destDir.
	Deliver(ctx context.Context, as StageOwner, src, destDir, name string) error
}

// Service is the job router of one box. Safe for concurrent use.
type Service struct {
	cfg  svcConfig
	log  *slog.Logger
	db   *db
	exec *local.Exec

	mu      sync.Mutex
	jobs    map[string]*Job
	local   map[string]*localRun // jobs holding local resources
	remote  map[string]*Domain   // job id → the domain it was sent to
	domains map[string]*Domain
	usage   map[string]usage
	outcome map[string][]outcome // per domain, recent results
	dirty   map[string]bool      // jobs to save
	staging map[string]context.CancelFunc
	// unsure are jobs whose submission to a domain was under way when
	// the box stopped and the domain could not yet say whether it got
	// them: asked again at each poll.
	unsure map[string]*Domain
	// held are the slots given to no job until a cleanup after their
	// last one succeeds (heldSlot); retrying counts the cleanups under
	// way, which Run waits for.
	held     map[string]*heldSlot
	retrying sync.WaitGroup
	kick     chan struct{}
	lastRun  time.Time
}

// localRun is a job on the box's cores.
type localRun struct {
	run      *local.Running // nil while staging
	stopping bool
	requeue  bool // preempted: back to the queue when it has stopped
}

// newService opens the database, recovers the jobs it holds
// (re-attaching to running local jobs or marking them lost) and returns
// the service; Run schedules.
func newService(cfg svcConfig, log *slog.Logger) (*Service, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = numCPU()
	}
	if cfg.MemoryMB <= 0 {
		cfg.MemoryMB = totalMemoryMB() * 8 / 10
	}
	if cfg.HalfLife <= 0 {
		cfg.HalfLife = defaultHalfLife
	}
	if cfg.PreemptGrace <= 0 {
		cfg.PreemptGrace = defaultPreemptGrace
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 250 * time.Millisecond
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 3 * time.Second
	}
	if cfg.Retention == 0 {
		cfg.Retention = defaultRetention
	}
	if cfg.ReleaseRetry <= 0 {
		cfg.ReleaseRetry = 10 * time.Second
	}
	if len(cfg.Slots) == 0 {
		return nil, local.ErrNoSlots
	}
	if err := local.PrepareJobDir(cfg.Dir); err != nil {
		return nil, err
	}
	d, err := openDB(cfg.DBPath)
	if err != nil {
		return nil, err
	}
	s := &Service{
		cfg: cfg, log: log, db: d,
		exec: local.NewExec(cfg.Self, log, cfg.PreemptGrace),
		jobs: map[string]*Job{}, local: map[string]*localRun{}, remote: map[string]*Domain{},
		domains: map[string]*Domain{}, outcome: map[string][]outcome{}, dirty: map[string]bool{},
		staging: map[string]context.CancelFunc{}, unsure: map[string]*Domain{}, held: map[string]*heldSlot{},
		kick: make(chan struct{}, 1),
	}
	for i := range cfg.Domains {
		s.domains[cfg.Domains[i].Name] = &cfg.Domains[i]
	}
	if s.usage, err = d.loadUsage(); err != nil {
		d.close()
		return nil, err
	}
	if err := s.recover(); err != nil {
		d.close()
		return nil, err
	}
	s.holdIdleSlots()
	return s, nil
}

// KnownDomain reports whether jobs may name domain.
func (s *Service) KnownDomain(name string) bool {
	_, ok := s.domains[name]
	return ok || name == "local"
}

// SiteDomains maps each grid site name the box's domains serve to those
// domains (local first), for +DESIRED_Sites.
func (s *Service) SiteDomains() map[string][]string {
	out := map[string][]string{}
	for _, site := range s.cfg.LocalSites {
		out[site] = append(out[site], "local")
	}
	for _, name := range s.Domains()[1:] {
		for _, site := range s.domains[name].Sites {
			out[site] = append(out[site], name)
		}
	}
	return out
}

// Domains lists the domain names, local first.
func (s *Service) Domains() []string {
	out := []string{"local"}
	for n := range s.domains {
		out = append(out, n)
	}
	sort.Strings(out[1:])
	return out
}

// recover brings the jobs of the database back after a restart.
func (s *Service) recover() error {
	js, err := s.db.load()
	if err != nil {
		return err
	}
	for _, j := range js {
		s.jobs[j.ID] = j
		if j.Issuer == "" {
			j.Issuer = unknownIssuer
			if !j.Grid && s.cfg.LegacyIssuer != "" {
				j.Issuer = s.cfg.LegacyIssuer
			}
			s.dirty[j.ID] = true
		}
		if j.State.Final() {
			continue
		}
		switch {
		case j.State == Idle:
		case j.State == Staging && j.Submitting:
			s.recoverSubmission(j)
		case j.State == Staging:
			s.requeue(j, "the box restarted while its inputs were being fetched")
		case j.Domain == "local" && j.State == Running:
			s.recoverLocal(j)
		default: // in another domain: its next poll says
			if d := s.domains[j.Domain]; d != nil {
				s.remote[j.ID] = d
			} else {
				s.end(j, Lost, fmt.Sprintf("domain %q is no longer configured", j.Domain))
			}
		}
	}
	return s.flush()
}

func copies(js []*Job) []*Job {
	out := make([]*Job, len(js))
	for i, j := range js {
		c := *j
		out[i] = &c
	}
	return out
}

// poke wakes the scheduler.
func (s *Service) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Get returns a copy of job id.
func (s *Service) Get(id string) (*Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return nil, false
	}
	c := *j
	return &c, true
}

// List returns copies of the jobs keep accepts (nil: all), oldest first.
func (s *Service) List(keep func(*Job) bool) []*Job {
	s.mu.Lock()
	var out []*Job
	for _, j := range s.jobs {
		if keep == nil || keep(j) {
			c := *j
			out = append(out, &c)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return jobLess(out[a].ID, out[b].ID) })
	return out
}

// jobLess orders "cluster.process" ids numerically.
func jobLess(a, b string) bool {
	ac, ap, _ := strings.Cut(a, ".")
	bc, bp, _ := strings.Cut(b, ".")
	if x, y := idNumber(ac), idNumber(bc); x != y {
		return x < y
	}
	return idNumber(ap) < idNumber(bp)
}

// idNumber is one part of a job id as a number (0 if it is none).
func idNumber(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}

// Close stops scheduling; running local jobs keep running (they are
// re-attached by the next start), their records saved.
func (s *Service) Close() error {
	s.mu.Lock()
	for _, cancel := range s.staging {
		cancel()
	}
	s.saveUsageLocked(time.Now())
	err := s.flushLocked()
	s.mu.Unlock()
	return errors.Join(err, s.db.close())
}
