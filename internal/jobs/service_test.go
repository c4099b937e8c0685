package jobs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/local/localtest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs/spec"
)

func TestMain(m *testing.M) { localtest.Main(m) }

// testIssuer issues the tests' users.
const testIssuer = "https://site.test"

// as is the test issuer's user sub.
func as(sub string) Principal { return Principal{Issuer: testIssuer, Subject: sub} }

// testSlots are the slot users of this package's tests (by default
// sbxslot1 and sbxslot2).
func testSlots(t *testing.T, names ...string) []local.Slot {
	t.Helper()
	if len(names) == 0 {
		names = []string{"sbxslot1", "sbxslot2"}
	}
	return localtest.Slots(t, names...)
}

// fakeStager copies local files for inputs and outputs, and remembers
// whom it staged for.
type fakeStager struct {
	outDir string
	mu     sync.Mutex
	as     []StageOwner
}

func (f *fakeStager) saw(as StageOwner) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.as = append(f.as, as)
}

func (f *fakeStager) Fetch(_ context.Context, as StageOwner, in spec.Input, dst string) error {
	f.saw(as)
	b, err := os.ReadFile(in.From)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func (f *fakeStager) Deliver(_ context.Context, as StageOwner, src, _, name string) error {
	f.saw(as)
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	dst := filepath.Join(f.outDir, name)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	return os.WriteFile(dst, b, 0o644)
}

type svcEnv struct {
	t   *testing.T
	s   *Service
	cfg svcConfig
	ctx context.Context
	end context.CancelFunc
	ran chan struct{}
}

func newSvc(t *testing.T, mut func(*svcConfig)) *svcEnv {
	t.Helper()
	dir := localtest.ReachableDir(t)
	cfg := svcConfig{Dir: filepath.Join(dir, "sandboxes"), DBPath: filepath.Join(dir, "jobs.db"), CPUs: 1, MemoryMB: 4096,
		Slots: testSlots(t), Self: os.Args[0], PreemptGrace: time.Second, Tick: 50 * time.Millisecond, Stager: &fakeStager{outDir: t.TempDir()}}
	if mut != nil {
		mut(&cfg)
	}
	e := &svcEnv{t: t, cfg: cfg}
	e.start()
	t.Cleanup(func() {
		e.drain()
		e.stop()
	})
	return e
}

// drain kills the jobs still running at the end of a test and waits for
// their supervisors to end, so none writes in a directory being removed.
func (e *svcEnv) drain() {
	if e.s == nil {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		e.s.mu.Lock()
		n := len(e.s.local)
		for _, lr := range e.s.local {
			if lr.run != nil { // a job still staging starts, then dies
				syscall.Kill(-lr.run.PID, syscall.SIGKILL)
			}
		}
		e.s.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *svcEnv) start() {
	s, err := newService(e.cfg, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.s = s
	e.ctx, e.end = context.WithCancel(context.Background())
	e.ran = make(chan struct{})
	go func() { s.Run(e.ctx); close(e.ran) }()
}

// stop ends the service as a box shutdown does: running jobs go on.
func (e *svcEnv) stop() {
	if e.s == nil {
		return
	}
	e.end()
	<-e.ran
	e.s.Close()
	e.s = nil
}

func (e *svcEnv) submit(owner string, specs ...spec.Spec) []*Job {
	e.t.Helper()
	js, err := e.s.Submit(Submitter{Owner: as(owner), VO: "cms"}, specs)
	if err != nil {
		e.t.Fatal(err)
	}
	return js
}

func (e *svcEnv) waitState(id string, want State, within time.Duration) *Job {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, _ := e.s.Get(id)
		if j != nil && j.State == want {
			return j
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s: %+v, want state %s within %v", id, j, want, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitOutput waits until a job's stdout holds want: "Running" means its
// process started, not that the shell has reached its trap yet.
func (e *svcEnv) waitOutput(id, want string, within time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(within)
	for {
		rc, err := e.s.Logs(id, "stdout")
		if err != nil {
			e.t.Fatal(err)
		}
		out, _ := io.ReadAll(rc)
		rc.Close()
		if strings.Contains(string(out), want) {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("job %s: stdout %q, want %q within %v", id, out, want, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func sh(script string) spec.Spec {
	return spec.Spec{Executable: "/bin/sh", Arguments: []string{"-c", script}, CPUs: 1, MemoryMB: 256, Domains: []string{"local"}}
}

func TestLocalJobRunsAndAccounts(t *testing.T) {
	e := newSvc(t, nil)
	in := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(in, []byte("input data\n"), 0o644)
	sp := sh(`cat in.txt; i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo out > result.txt; echo warn >&2`)
	sp.Inputs = []spec.Input{{From: in}}
	sp.Outputs, sp.OutputDestination = []string{"result.txt"}, "root://x//store/out"
	j := e.submit("alice", sp)[0]
	done := e.waitState(j.ID, Completed, 30*time.Second)
	if done.CPUTime <= 0 || done.WallTime <= 0 || done.Started.IsZero() || done.Finished.Before(done.Started) {
		t.Errorf("accounting: cpu %v wall %v started %v finished %v", done.CPUTime, done.WallTime, done.Started, done.Finished)
	}
	if !strings.Contains(done.Reason, "1 output(s) delivered") {
		t.Errorf("reason %q", done.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(e.cfg.Stager.(*fakeStager).outDir, "result.txt")); string(b) != "out\n" {
		t.Errorf("delivered output %q", b)
	}
	rc, _ := e.s.Logs(j.ID, "stdout")
	out, _ := io.ReadAll(rc)
	rc.Close()
	if string(out) != "input data\n" {
		t.Errorf("stdout %q", out)
	}
	rc, _ = e.s.Logs(j.ID, "stderr")
	errb, _ := io.ReadAll(rc)
	rc.Close()
	if string(errb) != "warn\n" {
		t.Errorf("stderr %q", errb)
	}
	r := e.s.Report(time.Now().Add(-time.Hour))
	if len(r.Rows) == 0 || r.Rows[len(r.Rows)-1].Jobs != 1 || r.Rows[len(r.Rows)-1].CPUHours <= 0 {
		t.Errorf("report %+v", r.Rows)
	}
}

func TestFailuresSayWhy(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) { c.CPUs = 2 })
	bad := e.submit("alice", sh("exit 3"), spec.Spec{Executable: "/no/such/program", CPUs: 1, Domains: []string{"local"}})
	j := e.waitState(bad[0].ID, Failed, 20*time.Second)
	if j.ExitCode != 3 || j.Reason != "exited with code 3" {
		t.Errorf("exit 3: %d %q", j.ExitCode, j.Reason)
	}
	j = e.waitState(bad[1].ID, Failed, 20*time.Second)
	if !strings.Contains(j.Reason, "cannot start /no/such/program") {
		t.Errorf("missing program: %q", j.Reason)
	}
	// Memory over the request: the supervisor kills it and says so.
	mem := sh(`head -c 200000000 /dev/zero | tail -c 1 >/dev/null; python3 -c 'b=bytearray(300<<20); import time; time.sleep(10)'`)
	mem.MemoryMB = 64
	j = e.waitState(e.submit("alice", mem)[0].ID, Failed, 30*time.Second)
	if !strings.Contains(j.Reason, "MiB") {
		t.Errorf("memory hog: %q", j.Reason)
	}
}

func TestCancelRunningJob(t *testing.T) {
	e := newSvc(t, nil)
	j := e.submit("alice", sh("sleep 60"))[0]
	r := e.waitState(j.ID, Running, 20*time.Second)
	if err := e.s.Cancel(e.ctx, j.ID, as("bob")); err == nil {
		t.Error("bob cancelled alice's job")
	}
	if err := e.s.Cancel(e.ctx, j.ID, as("alice")); err != nil {
		t.Fatal(err)
	}
	e.waitState(j.ID, Cancelled, 5*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(r.Pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled job's processes still run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its slot is free again.
	next := e.submit("alice", sh("true"))[0]
	e.waitState(next.ID, Completed, 20*time.Second)
}

// A backfill job holding the only slot is preempted when a real job
// arrives: SIGTERM, the grace period, SIGKILL; requeued; it runs again
// after the real job.
func TestBackfillYields(t *testing.T) {
	// A grace long enough for a shell to run its trap on a loaded machine
	// (the whole suite runs in parallel on two cores).
	const grace = 3 * time.Second
	e := newSvc(t, func(c *svcConfig) { c.PreemptGrace = grace })
	bf := sh(`trap 'echo got TERM; exit 143' TERM; echo start; while true; do sleep 0.1; done`)
	bf.Backfill = true
	b := e.submit("grid-user", bf)[0]
	e.waitState(b.ID, Running, 20*time.Second)
	e.waitOutput(b.ID, "start", 20*time.Second)
	t0 := time.Now()
	real := e.submit("alice", sh("sleep 0.5"))[0]
	e.waitState(real.ID, Running, 10*time.Second)
	if el := time.Since(t0); el > grace+2*time.Second {
		t.Errorf("the real job started %v after it arrived (grace %v)", el, grace)
	}
	bj, _ := e.s.Get(b.ID)
	if bj.Preempted != 1 || bj.State == Running {
		t.Errorf("backfill job after preemption: %+v", bj)
	}
	rc, _ := e.s.Logs(b.ID, "stdout")
	out, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(out), "got TERM") {
		t.Errorf("the backfill job did not get SIGTERM first: %q", out)
	}
	e.waitState(real.ID, Completed, 20*time.Second)
	e.waitState(b.ID, Running, 20*time.Second) // requeued and back
	e.s.Cancel(e.ctx, b.ID, as("grid-user"))
	// A job that ignores TERM is killed after the grace period.
	stubborn := sh(`trap '' TERM; echo ready; while true; do sleep 0.1; done`)
	stubborn.Backfill = true
	e.waitState(b.ID, Cancelled, 10*time.Second)
	st := e.submit("grid-user", stubborn)[0]
	e.waitState(st.ID, Running, 20*time.Second)
	e.waitOutput(st.ID, "ready", 20*time.Second)
	t0 = time.Now()
	r2 := e.submit("alice", sh("true"))[0]
	e.waitState(r2.ID, Completed, 20*time.Second)
	if el := time.Since(t0); el < grace || el > grace+6*time.Second {
		t.Errorf("the real job ran %v after a TERM-ignoring backfill job (grace %v)", el, grace)
	}
}

// A restart of the box keeps queued jobs queued and re-attaches running
// ones; a job whose process died meanwhile is marked lost.
func TestRestartLosesNothing(t *testing.T) {
	e := newSvc(t, nil)
	long := e.submit("alice", sh("sleep 2; echo finished"))[0]
	queued := e.submit("alice", sh("echo second"))[0]
	r := e.waitState(long.ID, Running, 20*time.Second)
	e.stop() // the box goes down; the job runs on
	if syscall.Kill(r.Pid, 0) != nil {
		t.Fatal("the running job died with the box")
	}
	e.start()
	if j, _ := e.s.Get(long.ID); j.State != Running || j.Pid != r.Pid {
		t.Fatalf("after restart: %+v", j)
	}
	e.waitState(long.ID, Completed, 20*time.Second)
	e.waitState(queued.ID, Completed, 20*time.Second)
	rc, _ := e.s.Logs(long.ID, "stdout")
	out, _ := io.ReadAll(rc)
	rc.Close()
	if string(out) != "finished\n" {
		t.Errorf("re-attached job's output %q", out)
	}

	// Killed while the box was down, with no report left: lost.
	victim := e.submit("alice", sh("sleep 60"))[0]
	v := e.waitState(victim.ID, Running, 20*time.Second)
	e.stop()
	syscall.Kill(-v.Pid, syscall.SIGKILL)
	time.Sleep(200 * time.Millisecond)
	e.start()
	j := e.waitState(victim.ID, Lost, 5*time.Second)
	if !strings.Contains(j.Reason, "gone") {
		t.Errorf("lost job's reason %q", j.Reason)
	}
}

// Two users, one with heavy recent usage: the other's jobs start first.
func TestHeavyUserWaits(t *testing.T) {
	e := newSvc(t, nil)
	e.s.mu.Lock()
	e.s.usage[as("heavy").key()] = usage{Value: 3600, At: time.Now()}
	e.s.mu.Unlock()
	blocker := e.submit("x", sh("sleep 1"))[0]
	e.waitState(blocker.ID, Running, 20*time.Second)
	h := e.submit("heavy", sh("true"), sh("true"))
	l := e.submit("light", sh("true"), sh("true"))
	for _, j := range append(h, l...) {
		e.waitState(j.ID, Completed, 30*time.Second)
	}
	var hs, ls []time.Time
	for _, j := range h {
		g, _ := e.s.Get(j.ID)
		hs = append(hs, g.Started)
	}
	for _, j := range l {
		g, _ := e.s.Get(j.ID)
		ls = append(ls, g.Started)
	}
	if !ls[1].Before(hs[0]) {
		t.Errorf("light user's jobs started %v, heavy user's %v: want light first", ls, hs)
	}
}

func TestSubmitValidation(t *testing.T) {
	e := newSvc(t, nil)
	for _, c := range []struct {
		name string
		sp   spec.Spec
		want string
	}{
		{"no executable", spec.Spec{}, "executable is missing"},
		{"unknown domain", spec.Spec{Executable: "x", Domains: []string{"mars"}}, `unknown domain "mars"`},
		{"output outside the sandbox", spec.Spec{Executable: "x", Outputs: []string{"../../etc/passwd"}}, "leaves the job's sandbox"},
		{"input named outside the sandbox", spec.Spec{Executable: "x", Inputs: []spec.Input{{From: "/store/f", As: "/etc/passwd"}}}, "not an absolute path"},
		{"too big for local", spec.Spec{Executable: "x", CPUs: 64}, "asks for 64 CPUs"},
	} {
		if _, err := e.s.Submit(Submitter{Owner: as("alice")}, []spec.Spec{c.sp}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// A container job the client let through is refused where no
	// runtime exists (here: none on the box).
	if local.ContainerRuntime() == "" {
		sp := spec.Spec{Executable: "x", Container: "/cvmfs/img"}
		if _, err := e.s.Submit(Submitter{Owner: as("alice")}, []spec.Spec{sp}); err == nil || !strings.Contains(err.Error(), "domain local has no container runtime (apptainer is not installed on the box)") {
			t.Errorf("container job without a runtime: %v", err)
		}
	}
}
