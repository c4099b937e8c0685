// Package jobs is the job router: users submit jobs with a list of
// domains where they may run — the box's own cores ("local"), the site's
// batch system (Slurm), partner boxes, an HPC centre — and the router
// sends each to a domain with room, schedules the local domain with fair
// share and backfill, keeps the queue in an embedded database across
// restarts, and accounts CPU and wall time.
//
// This package is the router itself (Service: the queue and its
// database, the local domain's slots, routing, staging) and the Backend
// interface it routes through. Around it: spec (what a user asks to run
// and the job-file parsers), sched (the local scheduling policy), local
// (running jobs as slot users), backend/slurm, backend/htcondor and
// backend/partner (the other domains, built by the box from
// DomainSettings), api (HTTP handler and client), and jobstest and
// local/localtest for tests.
package jobs

import (
	"slices"
	"strings"
	"time"

	"sitebox/internal/auth"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/store"
)

// State is where a job is in its life.
type State string

const (
	Idle      State = "idle"      // queued, not placed yet
	Routed    State = "routed"    // handed to a non-local domain, waiting there
	Staging   State = "staging"   // inputs being fetched
	Running   State = "running"   // executing
	Completed State = "completed" // exited 0 (outputs delivered)
	Failed    State = "failed"    // exited non-zero, was killed, or staging failed
	Cancelled State = "cancelled" // by its owner or an operator
	Lost      State = "lost"      // its process vanished across a restart
)

// Final reports whether s is an end state.
func (s State) Final() bool {
	return s == Completed || s == Failed || s == Cancelled || s == Lost
}

// Job is a submitted job and everything known about it; it is what the
// database keeps.
type Job struct {
	ID    string    `json:"id"` // "<cluster>.<process>"
	Spec  spec.Spec `json:"spec"`
	Owner string    `json:"owner"` // the owner's subject: token sub, Kerberos user, X.509 DN (shown to users)
	// Issuer is the owner's issuer: a job belongs to the pair (Issuer,
	// Owner), so two issuers' "alice" never share jobs.
	Issuer string `json:"issuer,omitempty"`
	// Auth is how the owner proved who they are at submission
	// (auth.Method*): "token", "krb5", "x509". Empty on records from
	// before it was kept (see StageOwner).
	Auth string `json:"auth,omitempty"`
	// FQANs are an X.509 owner's VOMS attributes at submission.
	FQANs []string `json:"fqans,omitempty"`
	VO    string   `json:"vo"` // from the token's groups
	// Rights are what the token the job was submitted with allows: its
	// staging reads and writes exactly what that token would as a client
	// of the box, never what the box's own credentials could. Nil on
	// records from before rights were kept: public data only.
	Rights *Rights `json:"rights,omitempty"`
	Grid   bool    `json:"grid"`   // from outside the site (behind local users)
	State  State   `json:"state"`  // current state
	Reason string  `json:"reason"` // why it waits or why it ended, in words
	Domain string  `json:"domain,omitempty"`
	// Remote is the job's id in its domain's system (Slurm job id, the
	// other box's id).
	Remote string `json:"remote,omitempty"`
	// Remotes are every id the job has had in other domains, Remote's
	// predecessors included: after a crash during a submission, the
	// domain's job not among them is this attempt's.
	Remotes []string `json:"remotes,omitempty"`
	// Submitting is written before a submission to another domain and
	// cleared with its id (write-ahead): a box that restarts with it set
	// asks the domain whether the job got there instead of submitting it
	// twice.
	Submitting bool `json:"submitting,omitempty"`
	// Key is the submitter's own name for the job (a box flocking here:
	// its job's id), by which it finds the job again after it stopped
	// before recording this box's answer.
	Key       string    `json:"key,omitempty"`
	Submitted time.Time `json:"submitted"`
	Started   time.Time `json:"started,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
	ExitCode  int       `json:"exit_code"`
	CPUTime   float64   `json:"cpu_seconds"` // user + system of the job's processes
	// CPUUnknown: its domain could not say (Slurm without accounting
	// storage, a job too short to sample); reports say "unknown", not 0 %.
	CPUUnknown bool    `json:"cpu_unknown,omitempty"`
	WallTime   float64 `json:"wall_seconds"` // time it held its slots
	Preempted  int     `json:"preempted,omitempty"`
	Attempts   int     `json:"attempts,omitempty"`
	Retries    int     `json:"retries,omitempty"`   // reruns after failures (max_retries)
	Pid        int     `json:"pid,omitempty"`       // local supervisor (process group leader) while running
	PidStart   int64   `json:"pid_start,omitempty"` // its start time in clock ticks: pid + start identify it
	SandboxDir string  `json:"sandbox,omitempty"`
	// SandboxRemoved: the retention after its end has passed.
	SandboxRemoved bool `json:"sandbox_removed,omitempty"`
	// Slot is the slot user a local job runs as while it holds local
	// resources; the Slurm account for a Slurm job.
	Slot string `json:"slot,omitempty"`
}

// Principal is who owns a job: a token's issuer and subject. Ownership,
// fair share and logs use the pair; the subject alone names nobody.
type Principal struct {
	Issuer  string
	Subject string
}

// String is the pair as logs show it.
func (p Principal) String() string { return p.Subject + " (" + p.Issuer + ")" }

// key is the pair as fair-share usage is stored: issuers are URLs, so a
// space cannot be part of one.
func (p Principal) key() string {
	if p.Issuer == "" {
		return p.Subject
	}
	return p.Issuer + " " + p.Subject
}

// Rights are the groups and scopes of a token, kept with a job (no
// secret: the token itself is not kept).
type Rights struct {
	Groups []string      `json:"groups,omitempty"`
	Scopes []store.Scope `json:"scopes,omitempty"`
}

// RightsOf are id's groups and scopes.
func RightsOf(id *store.Identity) *Rights {
	if id == nil {
		return nil
	}
	return &Rights{Groups: slices.Clone(id.Groups), Scopes: slices.Clone(id.Scopes)}
}

// Submitter is who submits jobs: their owner, the VO they count for in
// fair share, whether they come from outside the site (grid jobs queue
// behind local users), and the rights their staging acts with.
type Submitter struct {
	Owner Principal
	// Method is how the owner proved who they are (auth.Method*), and
	// FQANs an X.509 owner's VOMS attributes: kept with the job, shown
	// with its owner.
	Method string
	FQANs  []string
	VO     string
	Grid   bool
	Rights *Rights
}

// StageOwner is whom a staging transfer acts for: the job, and its
// owner's identity with the rights the job was submitted with.
type StageOwner struct {
	Job      string
	Identity *store.Identity
}

// StageOwner is the job as its staging acts: its owner with its rights.
func (j *Job) StageOwner() StageOwner {
	id := &store.Identity{Method: j.authMethod(), Subject: j.Owner, Issuer: j.Issuer, FQANs: slices.Clone(j.FQANs)}
	if j.Rights != nil {
		id.Groups, id.Scopes = slices.Clone(j.Rights.Groups), slices.Clone(j.Rights.Scopes)
	}
	return StageOwner{Job: j.ID, Identity: id}
}

// authMethod is how j's owner proved who they are. Records from before
// jobs kept it name it only by their issuer's form ("krb5:REALM",
// "x509:CA"), which is read here, for them alone: a site-mapped owner
// keeps staging with the grants of its mapping.
func (j *Job) authMethod() string {
	switch {
	case j.Auth != "":
		return j.Auth
	case strings.HasPrefix(j.Issuer, "krb5:"):
		return auth.MethodKrb5
	case strings.HasPrefix(j.Issuer, "x509:"):
		return auth.MethodX509
	case j.Issuer != "":
		return auth.MethodToken
	}
	return ""
}

// ownerKey is j's owner as fair share counts: the (issuer, subject) pair.
func ownerKey(j *Job) string { return j.Principal().key() }

// Principal is the job's owner.
func (j *Job) Principal() Principal { return Principal{Issuer: j.Issuer, Subject: j.Owner} }

// unknownIssuer owns records written before jobs kept their issuer, when
// the box cannot say which issuer wrote them: no token carries it, so no
// one but the operator acts on them.
const unknownIssuer = "(unknown issuer: recorded before issuers were kept)"
