package jobs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// flakyBackend refuses every submission.
type flakyBackend struct {
	mu    sync.Mutex
	tries int
}

func (f *flakyBackend) Capacity(context.Context) (Capacity, error) { return Capacity{FreeCPUs: 8}, nil }
func (f *flakyBackend) Submit(context.Context, *Job) (string, error) {
	f.mu.Lock()
	f.tries++
	f.mu.Unlock()
	return "", errors.New("sbatch: error: Batch job submission failed: Invalid account")
}
func (f *flakyBackend) Poll(context.Context, []*Job) ([]Update, error) { return nil, nil }
func (f *flakyBackend) Cancel(context.Context, *Job) error             { return nil }

// A domain that keeps failing is routed around once its recent failure
// rate is over half; the waiting job says so.
func TestRouterAvoidsFailingDomain(t *testing.T) {
	fb := &flakyBackend{}
	e := newSvc(t, func(c *svcConfig) {
		c.Domains = []Domain{{Name: "site", Backend: fb}}
	})
	sp := sh("true")
	sp.Domains = []string{"site"}
	j := e.submit("alice", sp)[0]
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, _ := e.s.Get(j.ID)
		if strings.Contains(g.Reason, "of its last") {
			t.Logf("after %d refusals: %s", fb.tries, g.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job reason %q after %d refusals", g.Reason, fb.tries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fb.mu.Lock()
	n := fb.tries
	fb.mu.Unlock()
	time.Sleep(300 * time.Millisecond)
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.tries != n {
		t.Errorf("the router kept submitting to a failing domain (%d → %d)", n, fb.tries)
	}
}

// halfBackend accepts every job; its polls answer for the first job and
// fail for the rest.
type halfBackend struct {
	mu sync.Mutex
	n  int
}

func (h *halfBackend) Capacity(context.Context) (Capacity, error) { return Capacity{FreeCPUs: 8}, nil }
func (h *halfBackend) Submit(context.Context, *Job) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	return string(rune('0' + h.n)), nil
}
func (h *halfBackend) Poll(_ context.Context, js []*Job) ([]Update, error) {
	var ups []Update
	var errs []error
	for _, j := range js {
		if j.Remote == "1" {
			ups = append(ups, Update{ID: j.ID, State: Completed, Reason: "exited with code 0"})
		} else {
			errs = append(errs, errors.New("job "+j.Remote+": connection reset"))
		}
	}
	return ups, errors.Join(errs...)
}
func (h *halfBackend) Cancel(context.Context, *Job) error { return nil }

// One job a domain cannot answer for does not hide the others' news.
func TestPollKeepsPartialAnswers(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) {
		c.PollEvery = 50 * time.Millisecond
		c.Domains = []Domain{{Name: "site", Backend: &halfBackend{}}}
	})
	sp := sh("true")
	sp.Domains = []string{"site"}
	js := e.submit("alice", sp, sp)
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, _ := e.s.Get(js[0].ID)
		b, _ := e.s.Get(js[1].ID)
		if a.State == Completed && b.Remote == "2" || b.State == Completed && a.Remote == "2" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s of polls: %s %s %q, %s %s %q", a.Remote, a.State, a.Reason, b.Remote, b.State, b.Reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
