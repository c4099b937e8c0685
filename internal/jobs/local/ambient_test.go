package local_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs/local"
	"sitebox/internal/jobs/local/localtest"
)

// A box that runs as a non-root user with ambient capabilities (as the
// packaged unit grants CAP_SETUID, CAP_SETGID, CAP_CHOWN and CAP_KILL)
// hands them to the supervisor across execve; the job it starts as a
// slot user must still end up with none.
func TestJobGetsNoAmbientCapabilities(t *testing.T) {
	slots := localtest.Slots(t, "sbxslot15", "sbxslot16")
	box, job := slots[1], slots[0] // the "box" user and the job's slot
	dir := filepath.Join(localtest.ReachableDir(t), "sandboxes")
	sandbox := filepath.Join(dir, "1.0")
	if err := local.PrepareJobDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sandbox, 0o700); err != nil {
		t.Fatal(err)
	}
	plan := local.ExecPlan{Executable: "/bin/sh", Arguments: []string{"-c", "id -u; grep -E '^Cap(Eff|Prm|Amb|Inh)' /proc/self/status"},
		Stdout: "stdout", Stderr: "stderr", Slot: job}
	if err := local.WriteJSONAtomic(local.ControlFile(sandbox, local.ExecFile), plan); err != nil {
		t.Fatal(err)
	}
	// What the box's user owns, as when the box runs as it.
	for _, p := range []string{local.ControlDir(sandbox), local.ControlFile(sandbox, local.ExecFile)} {
		os.Chown(p, int(box.UID), int(box.GID))
	}
	os.Chown(sandbox, int(job.UID), int(box.GID))
	os.Chmod(sandbox, 0o770)

	caps := []uintptr{0 /* CAP_CHOWN */, 5 /* CAP_KILL */, 6 /* CAP_SETGID */, 7 /* CAP_SETUID */}
	cmd := exec.Command("/proc/self/exe", "job-exec", sandbox)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, AmbientCaps: caps,
		Credential: &syscall.Credential{Uid: box.UID, Gid: box.GID, Groups: []uint32{}}}
	done := make(chan error, 1)
	var out []byte
	go func() {
		var err error
		out, err = cmd.CombinedOutput()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("supervisor as %s with ambient capabilities: %v: %s", box.Name, err, out)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the supervisor did not end")
	}
	rep, err := local.ReadExit(sandbox)
	if err != nil || rep.ExitCode != 0 {
		t.Fatalf("exit report %+v: %v", rep, err)
	}
	b, _ := os.ReadFile(filepath.Join(sandbox, "stdout"))
	t.Logf("the job, started by a supervisor holding ambient capabilities:\n%s", b)
	if lines := strings.Split(string(b), "\n"); lines[0] != strconv.Itoa(int(job.UID)) {
		t.Errorf("the job ran as uid %q, want %s's %d", lines[0], job.Name, job.UID)
	}
	for _, c := range []string{"CapEff", "CapPrm", "CapAmb", "CapInh"} {
		if !strings.Contains(string(b), c+":\t0000000000000000") {
			t.Errorf("the job holds capabilities (%s):\n%s", c, b)
		}
	}
}

func TestMain(m *testing.M) { localtest.Main(m) }
