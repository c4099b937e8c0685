package jobs

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs/local"
)

func stdout(t *testing.T, e *svcEnv, id string) string {
	t.Helper()
	rc, err := e.s.Logs(id, "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return string(b)
}

// A job runs as a slot user with no capabilities, and reads neither the
// box's secrets nor another user's sandbox, which holds a secret.
func TestJobConfined(t *testing.T) {
	e := newSvc(t, func(c *svcConfig) { c.CPUs = 2 })
	// The box's own secret, as the state dir holds its issuer key.
	state := filepath.Join(t.TempDir(), "state")
	os.MkdirAll(state, 0o700)
	key := filepath.Join(state, "issuer.key")
	os.WriteFile(key, []byte("PRIVATE KEY"), 0o600)

	bob := e.submit("bob", sh(`echo bob-secret > secret; echo ready; sleep 30`))[0]
	e.waitOutput(bob.ID, "ready", 20*time.Second)
	bobRun, _ := e.s.Get(bob.ID) // on whichever slot was cleaned up first
	peek := sh(`id -u; grep -E '^Cap(Eff|Prm|Amb|Inh)' /proc/self/status; ` +
		`cat ` + key + ` || echo KEY-DENIED; ls ` + state + ` || echo STATE-DENIED; ` +
		`cat ../` + bob.ID + `/secret || echo SANDBOX-DENIED; ls ../` + bob.ID + ` || echo LIST-DENIED; ` +
		`p=$(pgrep -u ` + bobRun.Slot + ` sleep | head -1); echo "BOBPID=$p"; kill -0 $p 2>/dev/null && echo SIGNALLED || echo SIGNAL-DENIED`)
	alice := e.submit("alice", peek)[0]
	j := e.waitState(alice.ID, Completed, 20*time.Second)
	out := stdout(t, e, alice.ID)
	t.Logf("alice's job (slot %s):\n%s", j.Slot, out)
	lines := strings.Split(out, "\n")
	sl, _ := e.s.slotNamed(j.Slot)
	if lines[0] != strconv.Itoa(int(sl.UID)) || lines[0] == "0" {
		t.Errorf("the job ran as uid %q, want slot user %s (%d)", lines[0], sl.Name, sl.UID)
	}
	for _, c := range []string{"CapEff", "CapPrm", "CapAmb", "CapInh"} {
		if !strings.Contains(out, c+":\t0000000000000000") {
			t.Errorf("the job holds capabilities (%s):\n%s", c, out)
		}
	}
	for _, w := range []string{"KEY-DENIED", "STATE-DENIED", "SANDBOX-DENIED", "LIST-DENIED", "SIGNAL-DENIED"} {
		if !strings.Contains(out, w) {
			t.Errorf("the job was not denied (%s):\n%s", w, out)
		}
	}
	if strings.Contains(out, "BOBPID=\n") {
		t.Errorf("the test found no process of bob's job to signal:\n%s", out)
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "bob-secret") {
		t.Errorf("the job read a secret:\n%s", out)
	}
	if b, _ := e.s.Get(bob.ID); b.Slot == j.Slot {
		t.Errorf("two running jobs share slot %s", j.Slot)
	}
	e.s.Cancel(e.ctx, bob.ID, as("bob"))
	e.waitState(bob.ID, Cancelled, 10*time.Second)
	// The box has the sandbox back, the slot user nothing of it.
	fi, err := os.Stat(filepath.Join(j.SandboxDir, "stdout"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("the finished job's sandbox was not taken back: %v %v", fi, err)
	}
}

// A job's process that double-forks and leaves its session is gone when
// the job ends.
func TestDaemonDiesWithJob(t *testing.T) {
	e := newSvc(t, nil)
	j := e.submit("alice", sh(`(setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' &) ; `+
		`while [ ! -s daemon.pid ]; do sleep 0.05; done; echo detached`))[0]
	done := e.waitState(j.ID, Completed, 20*time.Second)
	b, err := os.ReadFile(filepath.Join(done.SandboxDir, "daemon.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		t.Fatalf("daemon.pid %q: %v (stdout %q)", b, err, stdout(t, e, j.ID))
	}
	sl, _ := e.s.slotNamed(done.Slot)
	if local.ProcOfUID(pid, sl.UID) {
		t.Errorf("the job's daemon (pid %d) outlived the job", pid)
	}
}

// A job that leaves its stdout and an output as links to the box's
// secrets gets neither read by the box: not in its logs, not delivered.
func TestSandboxLinksNotFollowed(t *testing.T) {
	e := newSvc(t, nil)
	secret := filepath.Join(t.TempDir(), "issuer.key")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	sp := sh(`rm -f stdout; ln -s ` + secret + ` stdout; ln -s ` + secret + ` result.txt`)
	sp.Outputs, sp.OutputDestination = []string{"result.txt"}, "root://x//store/out"
	j := e.waitState(e.submit("alice", sp)[0].ID, Failed, 20*time.Second)
	if !strings.Contains(j.Reason, "symbolic link") {
		t.Errorf("the linked output: %q", j.Reason)
	}
	if b, err := os.ReadFile(filepath.Join(e.cfg.Stager.(*fakeStager).outDir, "result.txt")); err == nil {
		t.Errorf("the box delivered a linked output: %q", b)
	}
	rc, err := e.s.Logs(j.ID, "stdout")
	if err == nil {
		b, _ := io.ReadAll(rc)
		rc.Close()
		t.Errorf("the box served a linked stdout: %q", b)
	}
}
