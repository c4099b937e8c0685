package slurm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/local/localtest"
	"sitebox/internal/jobs/spec"
	"sitebox/test/peers"
)

// fakeSlurm answers Slurm commands from a table keyed by the command
// name, and records the command lines it saw.
type fakeSlurm struct {
	mu    sync.Mutex
	calls []string
	reply func(name string, args []string) (string, error)
}

func (f *fakeSlurm) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	f.mu.Unlock()
	out, err := f.reply(name, args)
	return []byte(out), err
}

func slurmFail(cmd, stderr string) error {
	return &Error{Cmd: cmd, Stderr: stderr, Err: errors.New("exit status 1")}
}

func TestSlurmScript(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "shipped.sh"), []byte("#!/bin/sh\n"), 0o755)
	odd := []string{"plain", "two words", "it's", `say "hi"`, "$HOME", "`id`", "back\\slash", "", "new\nline", "*", "%j", "-n"}
	tests := []struct {
		name      string
		spec      spec.Spec
		partition string
		want      []string // lines the script must hold
		err       string   // error text, when it must fail
	}{
		{name: "defaults", spec: spec.Spec{Executable: "/bin/true"}, want: []string{
			"#!/bin/sh", "#SBATCH --job-name=sitebox-7.1", `#SBATCH --output="` + dir + `/stdout"`,
			`#SBATCH --error="` + dir + `/stderr"`, `#SBATCH --chdir="` + dir + `"`, "#SBATCH --export=NONE",
			"#SBATCH --cpus-per-task=1", "#SBATCH --mem=1024M", "export HOME='" + dir + "'", "exec '/bin/true'"}},
		{name: "resources", spec: spec.Spec{Executable: "/bin/true", CPUs: 4, MemoryMB: 300, WallTime: 61 * time.Second, Stdout: "o%1.txt", Stderr: "logs/e"},
			partition: "short", want: []string{"#SBATCH --cpus-per-task=4", "#SBATCH --mem=300M", "#SBATCH --time=2",
				`#SBATCH --partition="short"`, `#SBATCH --output="` + dir + `/o%%1.txt"`, `#SBATCH --error="` + dir + `/logs/e"`}},
		{name: "odd arguments", spec: spec.Spec{Executable: "/usr/bin/printf", Arguments: odd}, want: []string{
			`exec '/usr/bin/printf' 'plain' 'two words' 'it'\''s' 'say "hi"' '$HOME' '` + "`id`" + `' 'back\slash' '' 'new` + "\nline' '*' '%j' '-n'"}},
		{name: "odd env", spec: spec.Spec{Executable: "x", Env: map[string]string{"A": "it's $x", "B_2": "", "HOME": "/h"}}, want: []string{
			`export A='it'\''s $x'`, "export B_2=''", "export HOME='/h'", "exec 'x'"}},
		{name: "shipped executable", spec: spec.Spec{Executable: "shipped.sh"}, want: []string{"exec './shipped.sh'"}},
		{name: "bad env name", spec: spec.Spec{Executable: "x", Env: map[string]string{"A-B": "1"}}, err: `"A-B" is not a valid shell name`},
		{name: "NUL in argument", spec: spec.Spec{Executable: "x", Arguments: []string{"a\x00b"}}, err: "NUL"},
		{name: "stdout outside sandbox", spec: spec.Spec{Executable: "x", Stdout: "../out"}, err: "not a path inside the sandbox"},
		{name: "newline in stdout", spec: spec.Spec{Executable: "x", Stdout: "a\nb"}, err: "control character"},
		{name: "hetjob in partition", spec: spec.Spec{Executable: "x"}, partition: "myhetjobs", err: "packjob, hetjob"},
		{name: "no executable", spec: spec.Spec{}, err: "no executable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := slurmScript(&jobs.Job{ID: "7.1", Spec: tc.spec, SandboxDir: dir}, tc.partition)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w+"\n") {
					t.Errorf("script lacks line %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestSlurmScriptRunsInShell runs a generated script with /bin/sh (the
// #SBATCH lines are comments to it) to prove that odd arguments and
// environment values reach the program unchanged.
func TestSlurmScriptRunsInShell(t *testing.T) {
	dir := t.TempDir()
	args := []string{"two words", "it's", `say "hi"`, "$HOME", "`id`", "back\\slash", "", "new\nline", "*", "-n"}
	script, err := slurmScript(&jobs.Job{ID: "1.0", SandboxDir: dir, Spec: spec.Spec{
		Executable: "/bin/sh",
		Arguments:  append([]string{"-c", `for a in "$@"; do printf '[%s]' "$a"; done; printf '{%s}' "$ODD"`, "sh"}, args...),
		Env:        map[string]string{"ODD": "a'b\"c $x `y` \\z"},
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/sh", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s\n%s", err, out, script)
	}
	want := ""
	for _, a := range args {
		want += "[" + a + "]"
	}
	want += "{a'b\"c $x `y` \\z}"
	if string(out) != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

func TestSbatchQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/a b", `"/a b"`}, {`x"y`, `"x\"y"`}, {`x\y`, `"x\\y"`}, {"#x", `"#x"`},
	} {
		if got := sbatchQuote(tc.in); got != tc.want {
			t.Errorf("sbatchQuote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseSqueue(t *testing.T) {
	got := parseSqueue("12|PENDING|Resources|N/A\n13|RUNNING|None|2026-11-23T06:58:56\n14|PENDING|None|2026-11-23T08:00:00\n" +
		"15|COMPLETING|None|2026-11-23T06:58:56\n16|SUSPENDED|None|2026-11-23T06:58:56\ngarbage\n17|CONFIGURING|None|N/A\n")
	start := time.Date(2026, 11, 23, 6, 58, 56, 0, time.Local)
	want := map[string]jobs.Update{
		"12": {State: jobs.Routed, Reason: "waiting in Slurm: Resources"},
		"13": {State: jobs.Running, Reason: "running in Slurm", Started: start},
		"14": {State: jobs.Routed, Reason: "waiting in Slurm"}, // %S of a pending job is an estimate
		"15": {State: jobs.Running, Reason: "running in Slurm", Started: start},
		"16": {State: jobs.Running, Reason: "suspended in Slurm", Started: start},
		"17": {State: jobs.Routed, Reason: "waiting in Slurm for its nodes to boot"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d jobs, want %d: %+v", len(got), len(want), got)
	}
	for id, w := range want {
		if g := got[id]; g != w {
			t.Errorf("job %s: got %+v, want %+v", id, g, w)
		}
	}
}

func TestParseSacct(t *testing.T) {
	tests := []struct {
		name, line string
		want       jobs.Update
	}{
		{"completed from jobcomp", "5|COMPLETED|0:0|00:00:01||2026-11-23T06:59:29|2026-11-23T06:59:30",
			jobs.Update{State: jobs.Completed, Reason: "completed in Slurm", WallTime: 1,
				Started: time.Date(2026, 11, 23, 6, 59, 29, 0, time.Local), Finished: time.Date(2026, 11, 23, 6, 59, 30, 0, time.Local)}},
		{"failed with cpu", "6|FAILED|3:0|1-02:03:04|01:02.500|Unknown|Unknown",
			jobs.Update{State: jobs.Failed, Reason: "exited with code 3 in Slurm", ExitCode: 3, WallTime: 93784, CPUTime: 62.5}},
		{"killed by signal", "7|FAILED|0:9|00:10||None|None", jobs.Update{State: jobs.Failed, Reason: "killed by signal 9 in Slurm", ExitCode: 137, WallTime: 10}},
		{"cancelled by uid", "8|CANCELLED by 0|0:15|00:00:02|||", jobs.Update{State: jobs.Cancelled, Reason: "cancelled in Slurm", ExitCode: 143, WallTime: 2}},
		{"timeout", "9|TIMEOUT|0:0|00:01:00|||", jobs.Update{State: jobs.Failed, Reason: "exceeded its wall time in Slurm", WallTime: 60}},
		{"oom", "10|OUT_OF_MEMORY|0:125|00:00:05|||", jobs.Update{State: jobs.Failed, Reason: "ran out of memory in Slurm", ExitCode: 0 + 128 + 125, WallTime: 5}},
		{"node fail", "11|NODE_FAIL|0:0|00:00:05|||", jobs.Update{State: jobs.Failed, Reason: "its Slurm node failed", WallTime: 5}},
		{"still running in accounting", "12|RUNNING|0:0|00:00:05|||", jobs.Update{State: jobs.Lost, Reason: "Slurm accounting says RUNNING for a job squeue no longer lists", WallTime: 5}},
		{"unknown state", "13|WEIRD|0:0||||", jobs.Update{State: jobs.Lost, Reason: "unknown Slurm state WEIRD"}},
		{"unreadable exit code", "14|FAILED|x|00:00:05|||", jobs.Update{State: jobs.Failed, Reason: `failed in Slurm, with an exit code sacct gave as "x", which is not CODE:SIGNAL`, WallTime: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseSacct(tc.line + "\n")
			id, _, _ := strings.Cut(tc.line, "|")
			// An empty TotalCPU (the job completion file) is unknown CPU.
			want := tc.want
			want.CPUUnknown = strings.Split(tc.line, "|")[4] == ""
			if g := got[id]; g != want {
				t.Errorf("got  %+v\nwant %+v", g, want)
			}
		})
	}
	// Steps and junk are skipped; of two records of a requeued job the
	// last counts.
	got := parseSacct("20|REQUEUED|0:0|00:00:01|||\n20.batch|COMPLETED|0:0|||||\n20|COMPLETED|0:0|00:00:03|||\n\nsacct: error\n")
	if len(got) != 1 || got["20"].State != jobs.Completed || got["20"].WallTime != 3 {
		t.Errorf("requeued job: %+v", got)
	}
}

func TestSlurmDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{
		{"00:00:00", 0}, {"00:01:02", 62}, {"01:02.250", 62.25}, {"2-00:00:01", 172801}, {"", 0}, {"Unknown", 0}, {"1:2:3:4", 0}, {"x-01:00", 0},
	} {
		if got := slurmDuration(tc.in); got != tc.want {
			t.Errorf("slurmDuration(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSinfoFreeCPUs(t *testing.T) {
	out := "n1|idle|0/4/0/4\nn2|mix|2/2/0/4\nn3|alloc|4/0/0/4\nn4|drain|0/4/0/4\nn1|idle|0/4/0/4\nn5|idle~|0/8/0/8\nn6|down*|0/4/0/4\nbad\nn7|idle|0/x/0/4\nn8|idle|4\n"
	if got := sinfoFreeCPUs(out); got != 14 {
		t.Errorf("free CPUs = %d, want 14 (n1 once, n2, n5; n7 and n8 unreadable)", got)
	}
}

func TestSlurmSubmitFake(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		out     string
		err     error
		want    string
		wantErr string
	}{
		{"plain id", "42\n", nil, "42", ""},
		{"cluster suffix", "43;sitebox\n", nil, "43", ""},
		{"sbatch error", "", slurmFail("sbatch --parsable x", "sbatch: error: Batch job submission failed: Invalid partition name specified"), "", "Invalid partition name specified"},
		{"garbage", "Submitted batch job 44\n", nil, "", "not a job id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSlurm{reply: func(string, []string) (string, error) { return tc.out, tc.err }}
			b := New(Config{Command: f.run})
			got, err := b.Submit(context.Background(), &jobs.Job{ID: "1.0", SandboxDir: dir, Spec: spec.Spec{Executable: "/bin/true"}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "sbatch") {
					t.Fatalf("err = %v, want one naming sbatch and %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Submit = %q, %v; want %q", got, err, tc.want)
			}
			if want := "sbatch --parsable " + filepath.Join(dir, "job.sbatch"); f.calls[0] != want {
				t.Errorf("ran %q, want %q", f.calls[0], want)
			}
			if _, err := os.Stat(filepath.Join(dir, "job.sbatch")); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestSlurmPollFake(t *testing.T) {
	js := []*jobs.Job{{ID: "1.0", Remote: "11"}, {ID: "1.1", Remote: "12"}, {ID: "1.2", Remote: "13"}, {ID: "1.3", Remote: "14"}, {ID: "1.4", Remote: ""}}
	f := &fakeSlurm{reply: func(name string, args []string) (string, error) {
		switch {
		case name == "squeue":
			return "11|RUNNING|None|2026-11-23T06:58:56\n", nil
		case name == "sstat":
			return "11.batch|00:00:07\n11.extern|00:00:00\n", nil
		case name == "sacct" && args[0] != "-c":
			return "", slurmFail("sacct", "Slurm accounting storage is disabled")
		case name == "sacct":
			return "12|COMPLETED|0:0|00:00:01|||\n13|FAILED|2:0|00:00:01|||\n", nil
		}
		return "", errors.New("unexpected command " + name)
	}}
	b := New(Config{Command: f.run})
	for round := 0; round < 2; round++ {
		ups, err := b.Poll(context.Background(), js)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]jobs.Update{}
		for _, u := range ups {
			got[u.ID] = u
		}
		for id, want := range map[string]jobs.State{"1.0": jobs.Running, "1.1": jobs.Completed, "1.2": jobs.Failed, "1.3": jobs.Lost, "1.4": jobs.Lost} {
			if got[id].State != want {
				t.Errorf("round %d: job %s is %s (%s), want %s", round, id, got[id].State, got[id].Reason, want)
			}
		}
		if got["1.2"].ExitCode != 2 || !strings.Contains(got["1.3"].Reason, "neither squeue nor accounting") {
			t.Errorf("round %d: %+v %+v", round, got["1.2"], got["1.3"])
		}
		// CPU: sampled while running; unknown (not 0) from the job
		// completion file.
		if got["1.0"].CPUTime != 7 || !got["1.1"].CPUUnknown {
			t.Errorf("round %d: CPU of the running job %v, of the ended one unknown=%v", round, got["1.0"].CPUTime, got["1.1"].CPUUnknown)
		}
	}
	want := []string{
		"squeue -h -j 11,12,13,14 -o %i|%T|%r|%S",
		"sstat -a -n -P -j 11 -o JobID,AveCPU",
		"sacct -n -P -X -j 12,13,14 -o " + sacctFields,
		"sacct -c -n -P -X -j 12,13,14 -o " + sacctFields,
		"squeue -h -j 11,12,13,14 -o %i|%T|%r|%S",
		"sstat -a -n -P -j 11 -o JobID,AveCPU",
		"sacct -c -n -P -X -j 12,13,14 -o " + sacctFields, // remembered: no plain sacct again
	}
	if strings.Join(f.calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
	}
}

func TestSlurmPollFailures(t *testing.T) {
	js := []*jobs.Job{{ID: "1.0", Remote: "11"}}
	tests := []struct {
		name      string
		squeue    error
		sacct     error
		sacctC    error
		wantErr   string
		wantState jobs.State
		wantWhy   string
	}{
		{name: "squeue down", squeue: slurmFail("squeue", "slurm_load_jobs error: Unable to contact slurm controller"), wantErr: "Unable to contact slurm controller"},
		{name: "all ids unknown", squeue: slurmFail("squeue", "slurm_load_jobs error: Invalid job id specified"),
			sacct: slurmFail("sacct", "Slurm accounting storage is disabled"), wantState: jobs.Lost, wantWhy: "neither squeue nor accounting"},
		{name: "no accounting at all", sacct: slurmFail("sacct", "Slurm accounting storage is disabled"),
			sacctC: slurmFail("sacct -c", "Slurm job completion is disabled"), wantState: jobs.Lost, wantWhy: "accounting cannot tell"},
		{name: "no completion file yet", sacct: slurmFail("sacct", "Slurm accounting storage is disabled"),
			sacctC: slurmFail("sacct -c", "sacct: fatal: open /x/jobcomp.txt: No such file or directory"), wantState: jobs.Lost, wantWhy: "neither"},
		{name: "slurmdbd down", sacct: slurmFail("sacct", "sacct: error: Problem talking to the database: Connection refused"), wantErr: "Problem talking to the database"},
		{name: "sacct timeout", sacct: &Error{Cmd: "sacct", Err: context.DeadlineExceeded}, wantErr: "deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSlurm{reply: func(name string, args []string) (string, error) {
				switch {
				case name == "squeue":
					return "", tc.squeue
				case args[0] == "-c":
					return "", tc.sacctC
				}
				return "", tc.sacct
			}}
			ups, err := New(Config{Command: f.run}).Poll(context.Background(), js)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(ups) != 1 || ups[0].State != tc.wantState || !strings.Contains(ups[0].Reason, tc.wantWhy) {
				t.Fatalf("Poll = %+v, %v; want %s with %q", ups, err, tc.wantState, tc.wantWhy)
			}
		})
	}
}

func TestSlurmCancelAndCapacityFake(t *testing.T) {
	f := &fakeSlurm{reply: func(name string, args []string) (string, error) {
		switch name {
		case "scancel":
			return "", slurmFail("scancel", "scancel: error: Kill job error on job id 9: Job/step already completing or completed")
		case "sinfo":
			return "n1|mix|1/3/0/4\n", nil
		case "squeue":
			return "RUNNING|sitebox-1.0\nPENDING|sitebox-1.1\nPENDING|someone-else\nCOMPLETING|sitebox-1.2\n", nil
		}
		return "", errors.New("unexpected")
	}}
	b := New(Config{Command: f.run, Partition: "p"})
	if err := b.Cancel(context.Background(), &jobs.Job{ID: "1.0", Remote: "9"}); err != nil {
		t.Errorf("cancel of an ended job: %v", err)
	}
	if err := b.Cancel(context.Background(), &jobs.Job{ID: "1.0", Remote: "9; rm"}); err == nil {
		t.Error("cancel of a bad id worked")
	}
	c, err := b.Capacity(context.Background())
	if err != nil || c != (jobs.Capacity{FreeCPUs: 3, Running: 2, Queued: 1}) {
		t.Errorf("Capacity = %+v, %v", c, err)
	}
	if want := "sinfo -h -N -o %N|%t|%C -p p"; f.calls[1] != want {
		t.Errorf("ran %q, want %q", f.calls[1], want)
	}
}

// TestSlurmCommandTimeout checks that the default runner stops a command
// at the timeout and names it.
func TestSlurmCommandTimeout(t *testing.T) {
	b := New(Config{Timeout: 200 * time.Millisecond})
	t0 := time.Now()
	_, err := b.run(context.Background(), "sleep", "5")
	if err == nil || !strings.Contains(err.Error(), "sleep 5") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error naming the command", err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestSlurmBackendReal runs jobs through a private Slurm (munged,
// slurmctld, slurmd on 127.0.0.1): one that succeeds, one that exits 3,
// one cancelled while running and one left waiting on a full node.
func TestSlurmBackendReal(t *testing.T) {
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
		peers.Require(t, tool)
	}
	t0 := time.Now()
	ctx := context.Background()
	dir := localtest.ReachableDir(t)
	runAs := localtest.Slots(t, "sbxslot3")[0]
	s, err := peers.StartSlurm(ctx, peers.SlurmConfig{WorkDir: filepath.Join(dir, "slurm"), CPUs: 2, MemoryMB: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	t.Logf("StartSlurm: %v", time.Since(t0))
	b := New(Config{Partition: s.Partition, Env: s.Env(), RunAs: runAs})

	if c, err := b.Capacity(ctx); err != nil || c != (jobs.Capacity{FreeCPUs: 2}) {
		t.Fatalf("Capacity of an idle node = %+v, %v", c, err)
	}
	submit := func(id string, sp spec.Spec) *jobs.Job {
		t.Helper()
		sp.MemoryMB = 100
		j := &jobs.Job{ID: id, Spec: sp, SandboxDir: filepath.Join(dir, "sandbox", id)}
		if err := os.MkdirAll(j.SandboxDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if j.Remote, err = b.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
		return j
	}
	// waitFor polls j until ok holds, and returns its last update.
	waitFor := func(j *jobs.Job, what string, ok func(jobs.Update) bool) jobs.Update {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			ups, err := b.Poll(ctx, []*jobs.Job{j})
			if err != nil {
				t.Fatal(err)
			}
			if ok(ups[0]) {
				return ups[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s (Slurm %s) not %s after 60 s: %+v", j.ID, j.Remote, what, ups[0])
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	final := func(u jobs.Update) bool { return u.State.Final() }

	good := submit("1.0", spec.Spec{Stdout: "logs/out", Executable: "/bin/sh", Arguments: []string{"-c", `echo "hello from $1"; echo oops >&2; id -u > uid`, "sh", "it's slurm"}})
	bad := submit("1.1", spec.Spec{Executable: "/bin/sh", Arguments: []string{"-c", "exit 3"}})
	// After a crash between sbatch and its record, the box finds the
	// job by name and sandbox, never an earlier attempt's.
	if id, err := b.Find(ctx, &jobs.Job{ID: "1.0", SandboxDir: good.SandboxDir, Submitted: time.Now()}); err != nil || id != good.Remote {
		t.Errorf("Find of a submitted job = %q, %v; want %s", id, err, good.Remote)
	}
	u := waitFor(good, "final", final)
	if id, err := b.Find(ctx, &jobs.Job{ID: "1.0", SandboxDir: good.SandboxDir, Submitted: time.Now()}); err != nil || id != good.Remote {
		t.Errorf("Find of an ended job = %q, %v; want %s", id, err, good.Remote)
	}
	if id, err := b.Find(ctx, &jobs.Job{ID: "1.0", SandboxDir: good.SandboxDir, Remotes: []string{good.Remote}, Submitted: time.Now()}); err != nil || id != "" {
		t.Errorf("Find with the job an earlier attempt's = %q, %v; want none", id, err)
	}
	if u.State != jobs.Completed || u.ExitCode != 0 || u.Started.IsZero() || u.Finished.IsZero() {
		t.Errorf("good job: %+v", u)
	}
	if out, _ := os.ReadFile(filepath.Join(good.SandboxDir, "logs", "out")); string(out) != "hello from it's slurm\n" {
		t.Errorf("good job's stdout %q", out)
	}
	if out, _ := os.ReadFile(filepath.Join(good.SandboxDir, "stderr")); string(out) != "oops\n" {
		t.Errorf("good job's stderr %q", out)
	}
	// Not as root, not as the box's user: as the run_as account.
	if out, _ := os.ReadFile(filepath.Join(good.SandboxDir, "uid")); strings.TrimSpace(string(out)) != strconv.FormatUint(uint64(runAs.UID), 10) {
		t.Errorf("the Slurm job ran as uid %q, want %s's %d", out, runAs.Name, runAs.UID)
	}
	if u = waitFor(bad, "final", final); u.State != jobs.Failed || u.ExitCode != 3 {
		t.Errorf("bad job: %+v", u)
	}
	t.Logf("two jobs done: %v", time.Since(t0))

	// A busy job's CPU is sampled while it runs (sstat) and kept: never
	// 0 %. It spins for 8 s of wall time, not a count of iterations,
	// so a loaded machine makes it use less CPU, not run for minutes.
	// (bash's SECONDS: no process per look at the clock, whose CPU the
	// sampling of the job's own processes would miss).
	busy := submit("1.2", spec.Spec{Executable: "/bin/bash", Arguments: []string{"-c", "end=$((SECONDS+8)); while [ $SECONDS -lt $end ]; do :; done"}})
	var cpu float64
	u = waitFor(busy, "final", func(u jobs.Update) bool { cpu = max(cpu, u.CPUTime); return u.State.Final() })
	if cpu <= 0 || u.CPUTime <= 0 && !u.CPUUnknown {
		t.Errorf("busy job: CPU sampled %v, final %+v", cpu, u)
	}
	t.Logf("busy job: %.1f s CPU sampled while running", cpu)

	// Fill the node's two CPUs, then one more job must wait.
	victim := submit("2.0", spec.Spec{Executable: "/bin/sleep", Arguments: []string{"300"}})
	filler := submit("2.1", spec.Spec{Executable: "/bin/sleep", Arguments: []string{"300"}})
	running := func(u jobs.Update) bool { return u.State == jobs.Running }
	waitFor(victim, "running", running)
	waitFor(filler, "running", running)
	waiter := submit("2.2", spec.Spec{Executable: "/bin/sleep", Arguments: []string{"300"}})
	u = waitFor(waiter, "waiting for resources", func(u jobs.Update) bool { return u.State == jobs.Routed && strings.Contains(u.Reason, "Resources") })
	t.Logf("waiting job: %s", u.Reason)
	if c, err := b.Capacity(ctx); err != nil || c != (jobs.Capacity{FreeCPUs: 0, Running: 2, Queued: 1}) {
		t.Errorf("Capacity of a full node = %+v, %v", c, err)
	}
	if err := b.Cancel(ctx, victim); err != nil {
		t.Fatal(err)
	}
	if u = waitFor(victim, "final", final); u.State != jobs.Cancelled {
		t.Errorf("cancelled job: %+v", u)
	}
	waitFor(waiter, "running", running) // it gets the freed CPU

	// A job Slurm never had is Lost, with the reason.
	ghost := &jobs.Job{ID: "3.0", Remote: "999999"}
	if u = waitFor(ghost, "final", final); u.State != jobs.Lost || !strings.Contains(u.Reason, "neither squeue nor accounting") {
		t.Errorf("unknown job: %+v", u)
	}
	for _, j := range []*jobs.Job{filler, waiter} {
		if err := b.Cancel(ctx, j); err != nil {
			t.Error(err)
		}
	}
	t.Logf("real Slurm test: %v", time.Since(t0))
}

func TestMain(m *testing.M) { localtest.Main(m) }
