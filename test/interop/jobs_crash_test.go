package interop

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/test/peers"
)

// A box killed (SIGKILL) at random moments — while it stages inputs,
// starts supervisors, records completions — neither loses a job nor runs
// one twice: each job appends its id to a shared file when it starts, and
// after at least 50 kills every job has completed with its id there
// exactly once.
func TestJobCrashRunsOnce(t *testing.T) {
	const procs, kills = 60, 50
	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	conf := "[auth]\nsite_issuer = true\nissuer_url = \"" + spec.httpsURL() + "\"\n" +
		jobsConf(t, []string{"sbxslot17", "sbxslot18"}, "cpus = 2\n")
	log := sharedRunLog(t)

	n := spec.start(t, "jobs", "T3", conf)
	box := &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	os.WriteFile(filepath.Join(u.dir, "input.txt"), []byte("staged\n"), 0o644)
	ids := u.submit("crash.sub", `executable = /bin/sh
arguments = "-c 'echo $1 >> `+log+`; cat input.txt; sleep 0.3' sh $(Cluster).$(Process)"
transfer_input_files = input.txt
queue `+strconv.Itoa(procs)+`
`)
	if len(ids) != procs {
		t.Fatalf("submitted %d jobs, want %d", len(ids), procs)
	}
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	for i := 0; i < kills; i++ {
		time.Sleep(time.Duration(rnd.IntN(900)) * time.Millisecond)
		n.proc.Kill()
		n = spec.start(t, "jobs", "T3", conf)
	}
	u.n = &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	for _, id := range ids {
		j := u.wait(id, jobs.Completed, 120*time.Second)
		if out, _ := u.cli("logs", id); strings.TrimSpace(out) != "staged" {
			t.Errorf("job %s: stdout %q (%s)", id, out, j.Reason)
		}
	}
	checkRanOnce(t, log, ids, "")
}

// The same with the jobs sent to Slurm: a box killed around sbatch and
// the record of its answer asks Slurm (by job name and sandbox) instead
// of submitting again, so each proc still runs exactly once.
func TestJobCrashRunsOnceSlurm(t *testing.T) {
	const procs, kills = 1, 50
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
		peers.Require(t, tool)
	}
	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	sl, err := peers.StartSlurm(context.Background(), peers.SlurmConfig{WorkDir: filepath.Join(reachable(t), "slurm"), CPUs: 2, MemoryMB: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sl.Stop)
	conf := "[auth]\nsite_issuer = true\nissuer_url = \"" + spec.httpsURL() + "\"\n" +
		jobsConf(t, []string{"sbxslot17"}, "cpus = 1\n") +
		"[[jobs.domain]]\nname = \"site\"\ntype = \"slurm\"\nrun_as = \"sbxslot19\"\npartition = " + strconv.Quote(sl.Partition) +
		"\nslurm_conf = " + strconv.Quote(sl.Conf) + "\nmax_jobs = 50\nmax_idle_jobs = 50\n"
	log := sharedRunLog(t)

	n := spec.start(t, "jobs", "T3", conf)
	box := &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	sub := `executable = /bin/sh
arguments = "-c 'echo $1 >> ` + log + `; sleep 0.2' sh $(Cluster).$(Process)"
request_memory = 100
+Domains = "site"
queue ` + strconv.Itoa(procs) + "\n"
	// The kills land on sbatch and the record of its answer.
	ids := submitWhileKilling(t, spec, conf, u, sub, kills, 400)
	checkRanOnce(t, log, ids, " in Slurm")
}

// reachable is a temporary directory slot users may traverse.
func reachable(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		os.Chmod(p, 0o711)
	}
	return d
}

// Outputs come back to the submitter as condor_transfer_data brings them:
// `sitebox submit --wait` fetches stdout (in its logs/ directory, made
// for it), and outputs under their transfer_output_remaps names; a job
// that did not write a declared output fails, naming it; `sitebox fetch`
// downloads an ended job's files again; --dry-run shows each proc.
func TestJobOutputsBack(t *testing.T) {
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot17"}, "cpus = 1\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	os.WriteFile(filepath.Join(u.dir, "out.sub"), []byte(`executable = /bin/sh
arguments = "-c 'echo hello $1; echo result-$1 > result.txt' sh $(Process)"
output = logs/job.$(Process).out
transfer_output_files = result.txt
transfer_output_remaps = "result.txt = results/r.$(Process).txt"
environment = "A=1 B=two"
request_memory = 300
queue 2
`), 0o644)
	dry, err := u.cli("submit", "--dry-run", "out.sub")
	if err != nil || !strings.Contains(dry, "proc 1") || !strings.Contains(dry, "A=1") || !strings.Contains(dry, "memory_mb=300") || !strings.Contains(dry, "result.txt -> results/r.1.txt") {
		t.Errorf("dry run: %v\n%s", err, dry)
	}
	out, err := u.cli("submit", "--wait", "out.sub")
	if err != nil {
		t.Fatalf("submit --wait: %v\n%s", err, out)
	}
	for i := 0; i < 2; i++ {
		n := strconv.Itoa(i)
		if b, _ := os.ReadFile(filepath.Join(u.dir, "logs", "job."+n+".out")); string(b) != "hello "+n+"\n" {
			t.Errorf("proc %d stdout back: %q", i, b)
		}
		if b, _ := os.ReadFile(filepath.Join(u.dir, "results", "r."+n+".txt")); string(b) != "result-"+n+"\n" {
			t.Errorf("proc %d remapped output back: %q", i, b)
		}
	}
	ids := u.submit("missing.sub", "executable = /bin/true\ntransfer_output_files = never.txt\nqueue\n")
	j := u.wait(ids[0], jobs.Failed, 30*time.Second)
	if !strings.Contains(j.Reason, "never.txt") {
		t.Errorf("missing output: %q", j.Reason)
	}
	fetchDir := t.TempDir()
	if out, err := u.cli("fetch", "--dir", fetchDir, ids[0]); err != nil || !strings.Contains(out, "stdout") {
		t.Errorf("fetch: %v %s", err, out)
	}
}

// "queue 100" with a 1 MB input ships and stores the input once (it was
// refused as too large when every proc carried its own copy).
func TestJobSharedInput(t *testing.T) {
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot17", "sbxslot18"}, "cpus = 2\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	writeRandom(t, filepath.Join(u.dir, "big.bin"), 1<<20)
	ids := u.submit("many.sub", "executable = /usr/bin/wc\narguments = -c big.bin\ntransfer_input_files = big.bin\nqueue 100\n")
	if len(ids) != 100 {
		t.Fatalf("%d jobs submitted", len(ids))
	}
	for _, id := range []string{ids[0], ids[99]} {
		u.wait(id, jobs.Completed, 180*time.Second)
		if out, _ := u.cli("logs", id); strings.TrimSpace(out) != "1048576 big.bin" {
			t.Errorf("job %s saw %q", id, out)
		}
	}
}

// The same with the jobs sent to a partner box (flocking): a box killed
// around its submission to the partner and the record of the answer asks
// the partner (by the key it sent, its job id) instead of submitting
// again, so each job runs exactly once there.
func TestJobCrashRunsOncePartner(t *testing.T) {
	const kills = 50
	bConf, _ := jobsConfDir(t, []string{"sbxslot20"}, "cpus = 1\n")
	b := startIssuerNode(t, "partner", "B", bConf)
	tokFile := filepath.Join(t.TempDir(), "a-at-b.token")
	os.WriteFile(tokFile, []byte(b.token(t, "box-a", "/region", computeScopes)), 0o600)

	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	conf := "[auth]\nsite_issuer = true\nissuer_url = \"" + spec.httpsURL() + "\"\n" +
		jobsConf(t, []string{"sbxslot17"}, "cpus = 1\n") +
		"[[jobs.domain]]\nname = \"region\"\ntype = \"box\"\nurl = " + strconv.Quote(b.httpsURL) + "\nca = " + strconv.Quote(b.certFile) +
		"\ntoken_file = " + strconv.Quote(tokFile) + "\nmax_jobs = 100\nmax_idle_jobs = 100\n"
	log := sharedRunLog(t)

	n := spec.start(t, "jobs", "T3", conf)
	box := &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	sub := `executable = /bin/sh
arguments = "-c 'echo $1 >> ` + log + `' sh $(Cluster).$(Process)"
+Domains = "region"
queue
`
	// The kills land on the submission to the partner and its record.
	ids := submitWhileKilling(t, spec, conf, u, sub, kills, 300)
	checkRanOnce(t, log, ids, " at the partner")
	// The partner holds one job per job of the box.
	bu := &jobUser{t: t, n: b, token: b.token(t, "box-a", "/region", computeScopes), dir: t.TempDir()}
	out, err := bu.cli("jobs")
	if err != nil {
		t.Fatalf("jobs at the partner: %v %s", err, out)
	}
	if got := strings.Count(out, "completed"); got != len(ids) {
		t.Errorf("the partner ran %d jobs for %d:\n%s", got, len(ids), out)
	}
}

// sharedRunLog is a file outside the sandboxes that every slot user may
// append to: jobs write their ids there when they run.
func sharedRunLog(t *testing.T) string {
	t.Helper()
	shared := filepath.Join(reachable(t), "runs")
	if err := os.Mkdir(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(shared, 0o1777)
	log := filepath.Join(shared, "started")
	if err := os.WriteFile(log, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(log, 0o666)
	return log
}

// submitWhileKilling submits sub (one job) once per cycle and kills the
// box at a random moment up to maxMs later, kills times, restarting it
// each time; then it waits for every job to complete on the last box.
func submitWhileKilling(t *testing.T, spec nodeSpec, conf string, u *jobUser, sub string, kills, maxMs int) []string {
	t.Helper()
	n := u.n.fedNode
	var ids []string
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(maxMs)))
	for i := 0; i < kills; i++ {
		u.n = &issuerNode{fedNode: n, issuer: spec.httpsURL()}
		ids = append(ids, u.submit("crash.sub", sub)...)
		time.Sleep(time.Duration(rnd.IntN(maxMs)) * time.Millisecond)
		n.proc.Kill()
		n = spec.start(t, "jobs", "T3", conf)
	}
	u.n = &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	for _, id := range ids {
		u.wait(id, jobs.Completed, 180*time.Second)
	}
	return ids
}

// checkRanOnce fails for every job whose id is not in log exactly once;
// where says where the jobs ran.
func checkRanOnce(t *testing.T, log string, ids []string, where string) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, id := range strings.Fields(string(b)) {
		count[id]++
	}
	for _, id := range ids {
		if count[id] != 1 {
			t.Errorf("job %s ran %d times%s", id, count[id], where)
		}
	}
}
