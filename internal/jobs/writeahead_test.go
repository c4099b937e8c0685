package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// findingBackend keeps its jobs running; Find cannot answer at first
// (its controller is down), then finds the job.
type findingBackend struct {
	mu        sync.Mutex
	submits   int
	findFails int
	// lostAnswer: Submit reaches the domain but its answer is lost (a
	// timeout, a cut connection).
	lostAnswer bool
}

func (f *findingBackend) Capacity(context.Context) (Capacity, error) {
	return Capacity{FreeCPUs: 8}, nil
}
func (f *findingBackend) Submit(context.Context, *Job) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submits++
	if f.lostAnswer {
		return "", errors.New("POST: context deadline exceeded")
	}
	return "r1", nil
}
func (f *findingBackend) Poll(_ context.Context, js []*Job) ([]Update, error) {
	var ups []Update
	for _, j := range js {
		ups = append(ups, Update{ID: j.ID, State: Running, Reason: "running there"})
	}
	return ups, nil
}
func (f *findingBackend) Cancel(context.Context, *Job) error { return nil }
func (f *findingBackend) Find(context.Context, *Job) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.findFails > 0 {
		f.findFails--
		return "", errors.New("slurm_load_jobs error: Unable to contact slurm controller")
	}
	return "r1", nil
}

// A box that stopped between a domain's submission and its record asks
// the domain; while the domain cannot answer, the job waits (neither
// lost nor submitted again) and is found at a later poll.
func TestWriteAheadSubmission(t *testing.T) {
	fb := &findingBackend{}
	e := newSvc(t, func(c *svcConfig) {
		c.PollEvery = 100 * time.Millisecond
		c.Domains = []Domain{{Name: "far", Backend: fb}}
	})
	sp := sh("true")
	sp.Domains = []string{"far"}
	j := e.submit("alice", sp)[0]
	e.waitState(j.ID, Running, 10*time.Second)
	e.stop()
	e.editRecord(j.ID, func(j *Job) { j.State, j.Submitting, j.Remote, j.Remotes = Staging, true, "", nil })
	fb.mu.Lock()
	fb.findFails = 3
	fb.mu.Unlock()
	e.start()
	if got, _ := e.s.Get(j.ID); got.State != Staging {
		t.Errorf("while the domain cannot say: %s (%s)", got.State, got.Reason)
	}
	got := e.waitState(j.ID, Running, 10*time.Second)
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if got.Remote != "r1" || fb.submits != 1 {
		t.Errorf("found as %q after %d submissions", got.Remote, fb.submits)
	}
}

// A submission whose answer is lost (it reached the domain) is found
// there, not requeued and submitted again.
func TestSubmissionAnswerLost(t *testing.T) {
	fb := &findingBackend{lostAnswer: true}
	e := newSvc(t, func(c *svcConfig) {
		c.PollEvery = 100 * time.Millisecond
		c.Domains = []Domain{{Name: "far", Backend: fb}}
	})
	sp := sh("true")
	sp.Domains = []string{"far"}
	j := e.submit("alice", sp)[0]
	got := e.waitState(j.ID, Running, 10*time.Second)
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if got.Remote != "r1" || fb.submits != 1 {
		t.Errorf("found as %q after %d submissions", got.Remote, fb.submits)
	}
}
