// Package jobstest runs a real job service for the tests of the packages
// around internal/jobs (the API, the backends). Only tests import it.
package jobstest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/local/localtest"
	"sitebox/internal/jobs/spec"
	"sitebox/internal/units"
)

// Issuer issues the tests' users.
const Issuer = "https://site.test"

// As is the test issuer's user sub.
func As(sub string) jobs.Principal { return jobs.Principal{Issuer: Issuer, Subject: sub} }

// Sh is a one-CPU local job running script in /bin/sh.
func Sh(script string) spec.Spec {
	return spec.Spec{Executable: "/bin/sh", Arguments: []string{"-c", script}, CPUs: 1, MemoryMB: 256, Domains: []string{"local"}}
}

// Env is a running service on one local CPU.
type Env struct {
	T   *testing.T
	S   *jobs.Service
	Ctx context.Context
}

// Start runs a service with jobs run as slots (its config and deps
// changed by mut) until the test ends.
func Start(t *testing.T, slots []string, mut func(*jobs.Settings, *jobs.Deps)) *Env {
	t.Helper()
	localtest.Slots(t, slots...)
	dir := localtest.ReachableDir(t)
	cfg := jobs.Settings{Enabled: true, Dir: filepath.Join(dir, "sandboxes"), SlotUsers: slots, CPUs: 1, Memory: 4 << 30, PreemptGrace: units.Duration(time.Second)}
	cfg.Defaults(filepath.Join(dir, "state"))
	deps := jobs.Deps{StateDir: filepath.Join(dir, "state"), Self: os.Args[0], Tick: 50 * time.Millisecond}
	if err := os.Mkdir(deps.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if mut != nil {
		mut(&cfg, &deps)
	}
	s, err := jobs.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ctx, end := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { s.Run(ctx); close(ran) }()
	t.Cleanup(func() {
		for _, j := range s.List(func(j *jobs.Job) bool { return !j.State.Final() }) {
			s.Cancel(ctx, j.ID, j.Principal())
		}
		// A cancelled job ends at once; its supervisor goes on a moment
		// (killing the job, writing its exit report into the test's
		// directory) and the job's Pid stays set until it has gone.
		running := func(j *jobs.Job) bool { return !j.State.Final() || j.Pid != 0 }
		waitUntil(20*time.Second, func() bool { return len(s.List(running)) == 0 })
		end()
		<-ran
		s.Close()
	})
	return &Env{T: t, S: s, Ctx: ctx}
}

// waitUntil polls done until it holds or within has passed.
func waitUntil(within time.Duration, done func() bool) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if done() {
			return true
		}
	}
	return done()
}

// Submit submits specs as the test issuer's owner, of the cms VO.
func (e *Env) Submit(owner string, specs ...spec.Spec) []*jobs.Job {
	e.T.Helper()
	js, err := e.S.Submit(jobs.Submitter{Owner: As(owner), VO: "cms"}, specs)
	if err != nil {
		e.T.Fatal(err)
	}
	return js
}

// WaitState waits until job id is in state want.
func (e *Env) WaitState(id string, want jobs.State, within time.Duration) *jobs.Job {
	e.T.Helper()
	var j *jobs.Job
	if !waitUntil(within, func() bool { j, _ = e.S.Get(id); return j != nil && j.State == want }) {
		e.T.Fatalf("job %s: %+v, want state %s within %v", id, j, want, within)
	}
	return j
}
