package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/internal/jobs"
	jobsapi "sitebox/internal/jobs/api"
	"sitebox/test/peers"
)

// A grid token with only storage scopes cannot submit; a job with
// compute.create runs as a slot user with no capabilities and reads
// neither the box's key and config nor another user's sandbox; a
// foreign issuer's "alice" sees, reads and cancels none of the site's
// alice's jobs. Every refusal says why, in the reply and the log.
func TestJobsConfined(t *testing.T) {
	foreign := newForeignIssuer(t, "https://foreign.example")
	conf, sandboxes := jobsConfDir(t, []string{"sbxslot6", "sbxslot7"}, "cpus = 2\n")
	box := startIssuerNode(t, "jobs", "T3", conf+foreign.conf())
	alice := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	bob := &jobUser{t: t, n: box, token: box.token(t, "bob", "/cms", computeScopes), dir: t.TempDir()}

	// Storage scopes do not run code.
	storage := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", "storage.read:/store,storage.create:/store"), dir: t.TempDir()}
	os.WriteFile(filepath.Join(storage.dir, "steal.sub"), []byte("executable = /bin/cat\narguments = /etc/hostname\nqueue\n"), 0o644)
	if out, err := storage.cli("submit", "steal.sub"); err == nil || !strings.Contains(out, "lacks the compute.create scope") {
		t.Errorf("a storage-only token submitted a job (%v): %s", err, out)
	}
	// And straight to the API, as any client could.
	peers.Require(t, "curl")
	body := `{"specs":[{"executable":"/bin/cat","arguments":["/etc/hostname"],"domains":["local"]}]}`
	reply, _ := runEnv(t, nil, "curl", "-s", "-w", " %{http_code}", "--cacert", box.certFile, "-H", "Authorization: Bearer "+storage.token,
		"-H", "Content-Type: application/json", "--data", body, box.httpsURL+jobsapi.Prefix)
	if !strings.HasSuffix(strings.TrimSpace(reply), " 403") || !strings.Contains(reply, "lacks the compute.create scope") {
		t.Errorf("POST %s with a storage-only token: %s", jobsapi.Prefix, reply)
	}
	if out, err := storage.cli("jobs"); err == nil || !strings.Contains(out, "lacks the compute.read scope") {
		t.Errorf("a storage-only token listed jobs (%v): %s", err, out)
	}
	if log := box.proc.Log.String(); !strings.Contains(log, "path=/api/v1/jobs remote") || !strings.Contains(log, "lacks the compute.create scope") {
		t.Errorf("the box did not log the refusal")
	}

	// Bob's job keeps a secret in its sandbox while alice's looks around.
	bid := bob.submit("secret.sub", "executable = /bin/sh\narguments = \"-c 'echo bob-secret > secret; echo ready; sleep 60'\"\nqueue\n")[0]
	bob.wait(bid, jobs.Running, 30*time.Second)
	waitLogs(t, bob, bid, "ready")
	peek := "#!/bin/sh\nid -u\ngrep -E '^Cap(Eff|Prm|Amb)' /proc/self/status\n" +
		"cat " + filepath.Join(box.state, "issuer", "issuer.key") + " || echo KEY-DENIED\n" +
		"cat " + filepath.Join(box.state, "sitebox.toml") + " >/dev/null || echo CONFIG-DENIED\n" +
		"cat " + filepath.Join(sandboxes, bid, "secret") + " || echo SANDBOX-DENIED\n"
	os.WriteFile(filepath.Join(alice.dir, "peek.sh"), []byte(peek), 0o755)
	aid := alice.submit("peek.sub", "executable = peek.sh\nqueue\n")[0]
	alice.wait(aid, jobs.Completed, 30*time.Second)
	out, _ := alice.cli("logs", aid)
	t.Logf("alice's job:\n%s", out)
	lines := strings.Split(out, "\n")
	if uid, err := strconv.Atoi(lines[0]); err != nil || uid == 0 || uid == os.Geteuid() {
		t.Errorf("the job ran as uid %q: want a slot user, never root or the box's user", lines[0])
	}
	for _, c := range []string{"CapEff", "CapPrm", "CapAmb"} {
		if !strings.Contains(out, c+":\t0000000000000000") {
			t.Errorf("the job holds capabilities (%s)", c)
		}
	}
	for _, w := range []string{"KEY-DENIED", "CONFIG-DENIED", "SANDBOX-DENIED"} {
		if !strings.Contains(out, w) {
			t.Errorf("the job was not refused (%s)", w)
		}
	}
	if strings.Contains(out, "PRIVATE KEY") || strings.Contains(out, "bob-secret") {
		t.Errorf("the job read a secret")
	}

	// The foreign "alice" is not the site's alice.
	long := alice.submit("long.sub", "executable = /bin/sleep\narguments = 60\nqueue\n")[0]
	alice.wait(long, jobs.Running, 30*time.Second)
	impostor := &jobUser{t: t, n: box, token: foreign.token(t, "alice", "", "compute.create compute.read compute.cancel"), dir: t.TempDir()}
	if out, err := impostor.cli("jobs"); err != nil || !strings.Contains(out, "(no jobs)") {
		t.Errorf("the foreign alice's job list (%v): %s", err, out)
	}
	for _, args := range [][]string{{"logs", aid}, {"jobs", "status", aid}, {"cancel", long}} {
		if out, err := impostor.cli(args...); err == nil || !strings.Contains(out, "no job") {
			t.Errorf("the foreign alice ran %v (%v): %s", args, err, out)
		}
	}
	if j := alice.status(long); j.State != jobs.Running {
		t.Errorf("the site's alice's job after the foreign cancel: %s (%s)", j.State, j.Reason)
	}
	if log := box.proc.Log.String(); !strings.Contains(log, "issuer=https://foreign.example") {
		t.Errorf("the box did not log the foreign alice's refusals with her issuer")
	}
	for u, id := range map[*jobUser]string{alice: long, bob: bid} {
		if out, err := u.cli("cancel", id); err != nil {
			t.Errorf("cancel %s: %v: %s", id, err, out)
		}
		waitGone(t, u, id)
	}
}

// waitGone waits until a cancelled local job's supervisor has ended (the
// box forgets its pid), so nothing writes in its directories any more.
func waitGone(t *testing.T, u *jobUser, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for u.status(id).Pid != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("job %s: its supervisor did not end", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitLogs waits until job id's output holds want.
func waitLogs(t *testing.T, u *jobUser, id, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if out, _ := u.cli("logs", id); strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s never printed %q", id, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
