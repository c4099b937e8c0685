package jobs

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs/spec"
)

// editRecord changes job id's record in the stopped service's database,
// as a crash at some instant would have left it.
func (e *svcEnv) editRecord(id string, edit func(*Job)) {
	e.t.Helper()
	d, err := openDB(e.cfg.DBPath)
	if err != nil {
		e.t.Fatal(err)
	}
	defer d.close()
	js, err := d.load()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, j := range js {
		if j.ID == id {
			edit(j)
			if err := d.save(j); err != nil {
				e.t.Fatal(err)
			}
			return
		}
	}
	e.t.Fatalf("no record of %s", id)
}

// A box that died between a job's start (written ahead) and the record
// of its supervisor finds the supervisor by its command line; one whose
// start was written but never happened requeues the job.
func TestWriteAheadStart(t *testing.T) {
	e := newSvc(t, nil)
	j := e.submit("alice", sh("sleep 1.5; echo once"))[0]
	r := e.waitState(j.ID, Running, 20*time.Second)
	e.stop()
	e.editRecord(j.ID, func(j *Job) { j.Pid, j.PidStart = 0, 0 })
	e.start()
	if got, _ := e.s.Get(j.ID); got.State != Running || got.Pid != r.Pid {
		t.Fatalf("after a crash before the pid was recorded: %s pid %d (supervisor %d)", got.State, got.Pid, r.Pid)
	}
	e.waitState(j.ID, Completed, 20*time.Second)
	e.waitOutput(j.ID, "once", time.Second)

	// Written ahead, never started (no supervisor, no report): requeued.
	k := e.submit("alice", sh("echo ran"))[0]
	e.waitState(k.ID, Completed, 20*time.Second)
	e.stop()
	e.editRecord(k.ID, func(j *Job) {
		j.State, j.Pid, j.PidStart, j.Domain, j.Attempts = Running, 0, 0, "local", j.Attempts+1
	})
	e.start()
	e.waitState(k.ID, Completed, 20*time.Second)
	if got, _ := e.s.Get(k.ID); got.Attempts != 3 {
		t.Errorf("the never-started job: attempts %d, want it started again (3)", got.Attempts)
	}
}

// Everything a job started ends with it: children in its process group,
// in a session of their own, detached from its output.
func TestOrphansKilled(t *testing.T) {
	e := newSvc(t, nil)
	j := e.submit("alice", sh(`setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; (sleep 300 </dev/null >/dev/null 2>&1 &) ; sleep 300 </dev/null >/dev/null 2>&1 & echo $!`))[0]
	e.waitState(j.ID, Completed, 20*time.Second)
	rc, _ := e.s.Logs(j.ID, "stdout")
	var b strings.Builder
	buf := make([]byte, 4096)
	n, _ := rc.Read(buf)
	rc.Close()
	b.Write(buf[:n])
	pids := strings.Fields(b.String())
	if len(pids) != 2 {
		t.Fatalf("stdout %q, want two pids", b.String())
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			t.Errorf("process %d of the completed job still runs", pid)
		}
	}
}

// The payload of a backfill job (not just its supervisor) runs at nice 19.
func TestBackfillPayloadNice19(t *testing.T) {
	e := newSvc(t, nil)
	bf := sh(`cut -d' ' -f19 /proc/self/stat; sh -c "cut -d' ' -f19 /proc/self/stat"`)
	bf.Backfill = true
	j := e.submit("grid-user", bf)[0]
	e.waitState(j.ID, Completed, 20*time.Second)
	e.waitOutput(j.ID, "19\n19\n", time.Second)
	real := e.submit("alice", sh(`cut -d' ' -f19 /proc/self/stat`))[0]
	e.waitState(real.ID, Completed, 20*time.Second)
	e.waitOutput(real.ID, "0\n", time.Second)
}

// Two real jobs arriving while two backfill jobs (that ignore SIGTERM)
// hold the box both start within one grace period: the backfill jobs are
// preempted together, not one grace after the other.
func TestTwoRealJobsPreemptTwoBackfill(t *testing.T) {
	const grace = 3 * time.Second
	e := newSvc(t, func(c *svcConfig) { c.CPUs, c.PreemptGrace = 2, grace })
	bf := sh(`trap '' TERM; echo ready; while true; do sleep 0.1; done`)
	bf.Backfill = true
	b := e.submit("grid-user", bf, bf)
	for _, j := range b {
		e.waitState(j.ID, Running, 20*time.Second)
		e.waitOutput(j.ID, "ready", 20*time.Second)
	}
	t0 := time.Now()
	real := e.submit("alice", sh("sleep 0.5"), sh("sleep 0.5"))
	for _, j := range real {
		e.waitState(j.ID, Running, 2*grace+5*time.Second)
	}
	if el := time.Since(t0); el > grace+2500*time.Millisecond {
		t.Errorf("both real jobs ran %v after they arrived; one grace is %v", el, grace)
	}
	for _, j := range b {
		e.s.Cancel(e.ctx, j.ID, as("grid-user"))
	}
}

// A report over a period shorter than the jobs counts only their time
// inside it (never over 100 % of the cores), and a job whose CPU its
// domain could not say is "unknown", never 0 % efficiency.
func TestReportClippedAndUnknownCPU(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) { c.CPUs = 2 })
	now := time.Now()
	e.s.mu.Lock()
	for i, j := range []*Job{
		// Two 1-core jobs that ran for the last hour, busy all along.
		{ID: "90.0", State: Completed, Domain: "local", Finished: now, WallTime: 3600, CPUTime: 3600},
		{ID: "90.1", State: Completed, Domain: "local", Finished: now, WallTime: 3600, CPUTime: 3600},
		{ID: "91.0", State: Completed, Domain: "slurm", Finished: now, WallTime: 600, CPUUnknown: true},
	} {
		j.Spec.CPUs, j.Owner, j.Issuer = 1, "alice", testIssuer
		j.Started = now.Add(-time.Duration(j.WallTime) * time.Second)
		e.s.jobs[j.ID] = j
		_ = i
	}
	e.s.mu.Unlock()
	r := e.s.Report(now.Add(-10 * time.Minute))
	for _, rr := range r.Rows {
		if rr.WallUtil > 1.0001 || rr.CPUUtil > 1.0001 {
			t.Errorf("%s: wall %.0f %% cpu %.0f %% of the cores over a 10-minute period", rr.Class, 100*rr.WallUtil, 100*rr.CPUUtil)
		}
		if rr.Class == "domain slurm" && (rr.CPUUnknown != 1 || rr.Efficiency != 0) {
			t.Errorf("slurm row %+v", rr)
		}
	}
	if out := r.Format(); !strings.Contains(out, "unknown") {
		t.Errorf("the report does not say the Slurm job's CPU is unknown:\n%s", out)
	}
}

// Outputs: a declared output the job did not write fails it by name; the
// directories of output and error are made; remapped outputs are
// delivered under their new names; kept outputs are listed for fetch;
// sandboxes go after the retention.
func TestOutputs(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) { c.CPUs = 2 })
	miss := sh("echo a > a.txt")
	miss.Outputs = []string{"a.txt", "b.txt"}
	logs := sh("echo to-log; echo r > r.txt")
	logs.Stdout, logs.Stderr = "logs/x.out", "logs/x.err"
	logs.Outputs, logs.OutputDestination = []string{"r.txt"}, "root://x//store/out"
	logs.OutputRemaps = map[string]string{"r.txt": "renamed/result.txt"}
	js := e.submit("alice", miss, logs)
	j := e.waitState(js[0].ID, Failed, 20*time.Second)
	if !strings.Contains(j.Reason, "b.txt") || strings.Contains(j.Reason, "a.txt") {
		t.Errorf("missing output: %q", j.Reason)
	}
	e.waitState(js[1].ID, Completed, 20*time.Second)
	if b, _ := os.ReadFile(filepath.Join(e.cfg.Stager.(*fakeStager).outDir, "renamed", "result.txt")); string(b) != "r\n" {
		t.Errorf("remapped output %q", b)
	}
	files, err := e.s.Outputs(js[1].ID)
	if err != nil || len(files) != 3 || files[0].Name != "logs/x.out" || files[2].SaveAs != "renamed/result.txt" {
		t.Errorf("outputs to fetch: %+v, %v", files, err)
	}
	rc, err := e.s.OpenOutput(js[1].ID, "logs/x.out")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "to-log\n" {
		t.Errorf("stdout in logs/: %q", b)
	}
	if _, err := e.s.OpenOutput(js[1].ID, "../jobs.db"); err == nil {
		t.Error("opened a file that is not an output")
	}
	// Retention: gone after it, with the record saying so.
	e.s.mu.Lock()
	e.s.cfg.Retention = time.Millisecond
	e.s.sweepLocked(time.Now().Add(time.Second))
	e.s.mu.Unlock()
	if _, err := os.Stat(js[1].SandboxDir); !os.IsNotExist(err) {
		t.Errorf("sandbox after the retention: %v", err)
	}
	if _, err := e.s.Outputs(js[1].ID); err == nil || !strings.Contains(err.Error(), "retention") {
		t.Errorf("outputs after the retention: %v", err)
	}
}

// A shared input is named by the hash of its bytes: a submission cannot
// name a file it did not send, nor send one under another's name.
func TestSharedInputChecked(t *testing.T) {
	e := newSvc(t, nil)
	sp := sh("cat in.txt")
	sp.Inputs = []spec.Input{{As: "in.txt", Ref: strings.Repeat("ab", 32)}}
	if _, err := e.s.SubmitKeyed(Submitter{Owner: as("alice"), VO: "cms"}, "", []spec.Spec{sp}, nil); err == nil {
		t.Error("a Ref not in the submission was accepted")
	}
	if _, err := e.s.SubmitKeyed(Submitter{Owner: as("alice"), VO: "cms"}, "", []spec.Spec{sp}, map[string][]byte{strings.Repeat("ab", 32): []byte("x")}); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("a file under another hash: %v", err)
	}
	sum := sha256.Sum256([]byte("shared\n"))
	ref := hex.EncodeToString(sum[:])
	sp.Inputs[0].Ref = ref
	js, err := e.s.SubmitKeyed(Submitter{Owner: as("alice"), VO: "cms"}, "", []spec.Spec{sp, sp}, map[string][]byte{ref: []byte("shared\n")})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range js {
		e.waitState(j.ID, Completed, 20*time.Second)
		e.waitOutput(j.ID, "shared\n", time.Second)
	}
}

// max_retries reruns a failing job, then fails it with the last reason.
func TestMaxRetries(t *testing.T) {
	e := newSvc(t, nil)
	sp := sh("echo run; exit 4")
	sp.MaxRetries = 2
	j := e.waitState(e.submit("alice", sp)[0].ID, Failed, 30*time.Second)
	if j.Retries != 2 || j.Attempts != 3 || j.Reason != "exited with code 4" {
		t.Errorf("after retries: retries %d attempts %d reason %q", j.Retries, j.Attempts, j.Reason)
	}
}
