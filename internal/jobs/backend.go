package jobs

import (
	"context"
	"time"
)

// Backend runs jobs in one domain other than the box's own cores: the
// site's batch system (Slurm, HTCondor) or another box. The router hands
// it jobs whose sandbox (inputs staged, on a filesystem the domain can
// see) is ready, and polls it for their fate. Implementations must be
// safe for concurrent use.
type Backend interface {
	// Capacity says how much room the domain has now; the router uses it
	// to choose among a job's domains.
	Capacity(ctx context.Context) (Capacity, error)
	// Submit starts j (its sandbox is j.SandboxDir) and returns the
	// domain's id for it.
	Submit(ctx context.Context, j *Job) (remote string, err error)
	// Poll reports the state of the given jobs (all submitted by this
	// backend). A job the domain no longer lists must be looked up in its
	// accounting, never guessed: when that is impossible the update says
	// Lost with the reason. On an error it still returns the updates of
	// the jobs it could poll.
	Poll(ctx context.Context, js []*Job) ([]Update, error)
	// Cancel stops j in the domain.
	Cancel(ctx context.Context, j *Job) error
}

// Capacity is a domain's room: free CPUs now (-1 unknown) and the jobs it
// holds.
type Capacity struct {
	FreeCPUs int
	Running  int
	Queued   int
}

// Update is what a backend learned about one job.
type Update struct {
	ID       string // Job.ID
	State    State
	Reason   string
	ExitCode int
	CPUTime  float64 // seconds, when known
	// CPUUnknown: the domain cannot say how much CPU the job used (Slurm
	// without accounting storage); the job's CPU is then "unknown", not 0.
	CPUUnknown bool
	WallTime   float64 // seconds, when known
	Started    time.Time
	Finished   time.Time
}

// sandboxReleaser is a Backend whose jobs run as an account of their own
// (Slurm's run_as): once a job has ended there, Release gives its
// sandbox back to the box, before its outputs are delivered.
type sandboxReleaser interface {
	Release(j *Job) error
}

// finder is a Backend that can say whether a submission the box did not
// see through reached the domain (the box stopped between the domain's
// answer and the record of it): the domain's id of j's current attempt,
// "" when there is none — an id among j.Remotes is an earlier attempt's.
type finder interface {
	Find(ctx context.Context, j *Job) (remote string, err error)
}
