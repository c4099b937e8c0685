package interop

import (
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/test/peers"
)

// computeScopes let a token's holder submit, see and cancel jobs.
const computeScopes = "compute.create,compute.read,compute.cancel"

// jobsConf is a [jobs] section whose jobs run as the slot users named
// (each box of a test its own: whatever a slot user runs dies with its
// job) in a sandbox dir they can reach, followed by extra.
func jobsConf(t *testing.T, slots []string, extra string) string {
	t.Helper()
	conf, _ := jobsConfDir(t, slots, extra)
	return conf
}

// jobsConfDir is jobsConf and its sandbox dir.
func jobsConfDir(t *testing.T, slots []string, extra string) (conf, sandboxes string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running jobs as slot users needs root")
	}
	q := make([]string, len(slots))
	for i, s := range slots {
		if _, err := user.Lookup(s); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("slot user %s: %v (scripts/setup.sh makes it)", s, err)
			}
			t.Skipf("slot user %s: %v (scripts/setup.sh makes it)", s, err)
		}
		q[i] = strconv.Quote(s)
	}
	// A t.TempDir is its creator's alone; slot users must reach their
	// sandboxes below it.
	dir := t.TempDir()
	for _, p := range []string{filepath.Dir(dir), dir} {
		os.Chmod(p, 0o711)
	}
	sandboxes = filepath.Join(dir, "jobs")
	return "[jobs]\nenabled = true\nslot_users = [" + strings.Join(q, ", ") + "]\ndir = " + strconv.Quote(sandboxes) + "\n" + extra, sandboxes
}

// jobUser runs the sitebox job commands against box n as a user with
// token.
type jobUser struct {
	t     *testing.T
	n     *issuerNode
	token string
	dir   string // where submit files are written (the command's cwd)
}

func (u *jobUser) env() []string {
	return []string{"BEARER_TOKEN=" + u.token, "SITEBOX_URL=" + u.n.httpsURL, "SITEBOX_CA=" + u.n.certFile}
}

func (u *jobUser) cli(args ...string) (string, error) {
	u.t.Helper()
	return runEnvDir(u.t, u.env(), u.dir, siteboxBin, args...)
}

// submit writes a submit file and submits it, returning the job ids.
func (u *jobUser) submit(name, text string) []string {
	u.t.Helper()
	os.WriteFile(filepath.Join(u.dir, name), []byte(text), 0o644)
	out, err := u.cli("submit", name)
	if err != nil {
		u.t.Fatalf("sitebox submit %s: %v: %s", name, err, out)
	}
	_, ids, _ := strings.Cut(strings.TrimSpace(out), ": ")
	return strings.Fields(ids)
}

func (u *jobUser) status(id string) jobs.Job {
	u.t.Helper()
	out, err := u.cli("jobs", "status", id, "--json")
	if err != nil {
		u.t.Fatalf("sitebox jobs status %s: %v: %s", id, err, out)
	}
	var j jobs.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		u.t.Fatalf("status %s: %v: %s", id, err, out)
	}
	return j
}

func (u *jobUser) wait(id string, want jobs.State, within time.Duration) jobs.Job {
	u.t.Helper()
	deadline := time.Now().Add(within)
	for {
		j := u.status(id)
		if j.State == want {
			return j
		}
		if j.State.Final() || time.Now().After(deadline) {
			u.t.Fatalf("job %s is %s (%s), want %s", id, j.State, j.Reason, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A job reads its input from the federation through the site's cache and
// writes its output back to the origin.
func TestJobFederationData(t *testing.T) {
	peers.Require(t, "sha256sum")
	pool := t.TempDir()
	in := writeRandom(t, filepath.Join(pool, "in/data.bin"), 2<<20)
	origin := startFedNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n")
	cacheDir := t.TempDir()
	cache := startFedNode(t, "cache", "T3", "[cache]\ndir = "+strconv.Quote(cacheDir)+
		"\n[[cache.route]]\nprefix = \"/store\"\nupstreams = [\""+origin.rootURL+"\"]\n")
	// The origin is at a loopback address, which staging (as third-party
	// copy) reaches only when the operator lists it.
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot4", "sbxslot5"}, "cpus = 2\ncache = \""+cache.rootURL+"\"\n")+
		"[tpc]\nallow = [\"*\", \"127.0.0.1\"]\n")
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", "storage.read:/store,"+computeScopes), dir: t.TempDir()}

	ids := u.submit("analysis.sub", `
executable = /bin/sh
arguments = "-c 'sha256sum data.bin > result.txt; echo analysed'"
transfer_input_files = /store/in/data.bin
transfer_output_files = result.txt
output_destination = `+origin.rootURL+`//store/out/$(Cluster)
request_cpus = 1
queue
`)
	j := u.wait(ids[0], jobs.Completed, 60*time.Second)
	t.Logf("job %s: %s", j.ID, j.Reason)
	cluster, _, _ := strings.Cut(j.ID, ".")
	got, err := os.ReadFile(filepath.Join(pool, "out", cluster, "result.txt"))
	if err != nil {
		t.Fatalf("output not delivered to the origin: %v", err)
	}
	want, _ := runEnv(t, nil, "sha256sum", filepath.Join(pool, "in/data.bin"))
	if strings.Fields(string(got))[0] != strings.Fields(want)[0] {
		t.Errorf("the job saw other bytes: %q vs %q", got, want)
	}
	cached, _ := run(t, false, siteboxBin, "cache", "ls", "--state-dir", cache.state)
	if !strings.Contains(cached, "/store/in/data.bin") {
		t.Errorf("the input did not come through the cache:\n%s", cached)
	}
	if out, _ := u.cli("logs", j.ID); strings.TrimSpace(out) != "analysed" {
		t.Errorf("sitebox logs: %q", out)
	}
	_ = in
}

// Box to box: a job whose domain is a partner box runs there (flocking),
// and its record, state and logs stay visible at the box it was
// submitted to.
func TestJobFlocking(t *testing.T) {
	bConf, bDir := jobsConfDir(t, []string{"sbxslot4"}, "cpus = 1\n")
	b := startIssuerNode(t, "partner", "B", bConf)
	tokFile := filepath.Join(t.TempDir(), "a-at-b.token")
	os.WriteFile(tokFile, []byte(b.token(t, "box-a", "/region", computeScopes)), 0o600)
	a := startIssuerNode(t, "home", "A", jobsConf(t, []string{"sbxslot5"}, "cpus = 1\n")+
		"[[jobs.domain]]\nname = \"region\"\ntype = \"box\"\nurl = "+strconv.Quote(b.httpsURL)+"\nca = "+strconv.Quote(b.certFile)+"\ntoken_file = "+strconv.Quote(tokFile)+"\n")
	u := &jobUser{t: t, n: a, token: a.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	ids := u.submit("flock.sub", `
executable = /bin/sh
arguments = "-c 'echo ran at; pwd'"
+Domains = "region"
queue
`)
	j := u.wait(ids[0], jobs.Completed, 60*time.Second)
	if j.Domain != "region" || j.Remote == "" {
		t.Errorf("flocked job: domain %q remote %q", j.Domain, j.Remote)
	}
	out, _ := u.cli("logs", j.ID)
	if !strings.Contains(out, "ran at") || !strings.Contains(out, bDir) {
		t.Errorf("logs of the flocked job (should show B's sandbox in %s): %q", bDir, out)
	}
	// At B the job belongs to box A's identity.
	bu := &jobUser{t: t, n: b, token: b.token(t, "box-a", "/region", computeScopes), dir: t.TempDir()}
	rj := bu.status(j.Remote)
	if rj.Owner != "box-a" || rj.State != jobs.Completed {
		t.Errorf("at the partner: %+v", rj)
	}
}

// Bad job files are refused before anything is queued, each problem with
// its line and reason.
func TestBadJobFiles(t *testing.T) {
	box := startIssuerNode(t, "jobs", "T3", jobsConf(t, []string{"sbxslot4"}, "cpus = 1\n"))
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "executable = /bin/true\nrequest_cpu = 2\nqueue\n", []string{"bad.sub:2", "request_cpu", "request_cpus"}},
		{"negative cpus", "executable = /bin/true\nrequest_cpus = -2\nqueue\n", []string{"bad.sub:2", "request_cpus"}},
		{"missing executable", "arguments = x\nqueue\n", []string{"bad.sub:2", "executable"}},
		{"unknown domain", "executable = /bin/true\n+Domains = \"local,mars\"\nqueue\n", []string{"bad.sub:2", "mars"}},
		{"toml unknown key", "[job]\nexecutable = \"/bin/true\"\ncpu = 1\n", []string{"bad.toml:3", "cpu"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "bad.sub"
			if strings.HasPrefix(c.text, "[job]") {
				name = "bad.toml"
			}
			os.WriteFile(filepath.Join(u.dir, name), []byte(c.text), 0o644)
			out, err := u.cli("submit", name)
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("message lacks %q: %s", w, out)
				}
			}
		})
	}
	if out, _ := u.cli("jobs"); !strings.Contains(out, "(no jobs)") {
		t.Errorf("something was queued:\n%s", out)
	}
}

// A restart of the box with jobs queued and running loses nothing: the
// running job is re-attached and finishes, the queued one runs after.
func TestJobsSurviveRestart(t *testing.T) {
	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	conf := "[auth]\nsite_issuer = true\nissuer_url = \"" + spec.httpsURL() + "\"\n" + jobsConf(t, []string{"sbxslot4"}, "cpus = 1\n")
	n := spec.start(t, "jobs", "T3", conf)
	box := &issuerNode{fedNode: n, issuer: spec.httpsURL()}
	u := &jobUser{t: t, n: box, token: box.token(t, "alice", "/cms", computeScopes), dir: t.TempDir()}
	ids := u.submit("two.sub", "executable = /bin/sh\narguments = \"-c 'sleep 3; echo done $(Process)'\"\nqueue 2\n")
	first := u.wait(ids[0], jobs.Running, 30*time.Second)
	n.proc.Stop() // SIGTERM: the box goes down, its job runs on
	if syscall.Kill(first.Pid, 0) != nil {
		t.Fatal("the running job died with the box")
	}
	n2 := spec.start(t, "jobs", "T3", conf)
	u.n = &issuerNode{fedNode: n2, issuer: spec.httpsURL()}
	if j := u.status(ids[0]); j.State != jobs.Running || j.Pid != first.Pid {
		t.Errorf("after the restart the running job is %s (pid %d, was %d)", j.State, j.Pid, first.Pid)
	}
	for i, id := range ids {
		u.wait(id, jobs.Completed, 60*time.Second)
		if out, _ := u.cli("logs", id); strings.TrimSpace(out) != "done "+strconv.Itoa(i) {
			t.Errorf("logs of %s: %q", id, out)
		}
	}
}
