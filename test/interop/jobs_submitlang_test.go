package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The submit language beyond one block, end to end through sitebox
// submit: include, if/else, getenv with a list, initialdir (inputs read
// from it, outputs returned into it), Requirements and Rank over the
// box's advertised attributes, several queue statements and
// $RANDOM_INTEGER; refused with their line and why: include command, a
// requirement no domain meets, and a container job on a box without
// apptainer.
func TestSubmitLanguage(t *testing.T) {
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot20"}, "cpus = 1\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	for _, d := range []string{"run_0", "run_1", "run_2"} {
		os.MkdirAll(filepath.Join(u.dir, d), 0o755)
		os.WriteFile(filepath.Join(u.dir, d, "in.txt"), []byte("input of "+d+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(u.dir, "common.inc"), []byte("request_memory = 256\nif defined VERBOSE\n  mode = loud\nelse\n  mode = quiet\nendif\n"), 0o644)
	os.WriteFile(filepath.Join(u.dir, "lang.sub"), []byte(`VERBOSE = 1
include : common.inc
executable = /bin/sh
arguments = "-c 'cat in.txt; echo $(mode) $SBX_SUBMITTER seed=$1' sh $RANDOM_INTEGER(5, 9)"
getenv = SBX_SUBMIT*
initialdir = run_$(Process)
transfer_input_files = in.txt
requirements = OpSys == "LINUX" && TARGET.Memory >= RequestMemory && Cpus >= 1
rank = Memory
output = job.out
queue 2
initialdir = run_2
queue
`), 0o644)
	env := append(u.env(), "SBX_SUBMITTER=alice-laptop")
	dry, err := runEnvDir(t, env, u.dir, siteboxBin, "submit", "--dry-run", "lang.sub")
	if err != nil || !strings.Contains(dry, "proc 2") || !strings.Contains(dry, "SBX_SUBMITTER=alice-laptop") || !strings.Contains(dry, "initialdir:  run_1") {
		t.Fatalf("dry run: %v\n%s", err, dry)
	}
	out, err := runEnvDir(t, env, u.dir, siteboxBin, "submit", "--wait", "lang.sub")
	if err != nil {
		t.Fatalf("submit --wait: %v\n%s", err, out)
	}
	for _, d := range []string{"run_0", "run_1", "run_2"} {
		b, _ := os.ReadFile(filepath.Join(u.dir, d, "job.out"))
		got := string(b)
		if !strings.HasPrefix(got, "input of "+d+"\nloud alice-laptop seed=") || !strings.ContainsAny(got[len(got)-2:], "56789") {
			t.Errorf("%s/job.out: %q", d, got)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"executable = /bin/true\ninclude command : touch pwned\nqueue\n", "bad.sub:2: include: include command is refused"},
		{"executable = /bin/true\nrequirements = Memory > 100000000\nqueue\n", "bad.sub:2: requirements: no domain of the job can run it: local does not meet Requirements"},
		{"executable = /bin/true\n+SingularityImage = \"/cvmfs/img\"\nqueue\n", "bad.sub:2: +SingularityImage: container jobs run in apptainer"},
	} {
		os.WriteFile(filepath.Join(u.dir, "bad.sub"), []byte(c.text), 0o644)
		out, err := u.cli("submit", "bad.sub")
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("%q: %v %s", c.text, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(u.dir, "pwned")); err == nil {
		t.Error("include command ran its command")
	}
}

// A box with a container runtime on its PATH runs container jobs inside
// it: here a stand-in apptainer (Debian 12 packages none) that notes the
// image and runs the command, which sees its sandbox as working directory.
func TestSubmitContainerJob(t *testing.T) {
	bin := reachable(t)
	fake := `#!/bin/sh
# a stand-in for: apptainer exec --no-home --bind DIR --pwd DIR IMAGE CMD...
[ "$1" = exec ] || exit 99
shift
while [ $# -gt 0 ]; do
	case "$1" in
	--no-home) shift ;;
	--bind|--pwd) shift 2 ;;
	*) break ;;
	esac
done
echo "in container $1"
shift
exec "$@"
`
	if err := os.WriteFile(filepath.Join(bin, "apptainer"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH")) // the box's and the CLI's
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot20"}, "cpus = 1\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	ids := u.submit("c.sub", `executable = /bin/sh
arguments = "-c 'echo ran in $PWD'"
+SingularityImage = "/cvmfs/unpacked.cern.ch/img:9"
requirements = HasSingularity
queue
`)
	j := u.wait(ids[0], "completed", 60*time.Second)
	out, _ := u.cli("logs", j.ID)
	if !strings.Contains(out, "in container /cvmfs/unpacked.cern.ch/img:9\nran in "+j.SandboxDir) {
		t.Errorf("logs of the container job: %q", out)
	}
}
