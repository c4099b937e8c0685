package interop

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/test/peers"
)

// diskSlot is this file's slot user (each test its own: whatever a slot
// user runs dies with its job).
const diskSlot = "sbxslot22"

// Tokens decide what a job may read through the box; the disk must not
// undo that. A box started as the README's quick start shows (umask 022,
// the pool made with mkdir, so 0755) refuses to start with jobs, naming
// the pool; with the pool 0750 it starts, and a job a foreign issuer's
// token may submit (compute scopes only) reads neither a file PUT into
// the pool nor the cache's copy of a VO-protected file.
func TestJobsCannotReadPoolsOrCache(t *testing.T) {
	peers.Require(t, "curl")
	jconf := jobsConf(t, []string{diskSlot}, "cpus = 1\n")
	old := syscall.Umask(0o022) // as a shell leaves it; the boxes inherit it
	t.Cleanup(func() { syscall.Umask(old) })

	remote := t.TempDir()
	cachedSecret := "cached-secret-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	os.MkdirAll(filepath.Join(remote, "cms"), 0o755)
	os.WriteFile(filepath.Join(remote, "cms", "cached.txt"), []byte(cachedSecret+"\n"), 0o644)
	upstream := startFedNode(t, "upstream", "B", "[[export]]\nprefix = \"/remote\"\npools = ["+quote(remote)+"]\n")

	// Where an operator keeps data (/srv, /var/cache): others may enter.
	top := t.TempDir()
	os.Chmod(top, 0o755)
	pool, cacheDir := filepath.Join(top, "pool"), filepath.Join(top, "cache")
	if err := os.Mkdir(pool, 0o777); err != nil { // mkdir(1)
		t.Fatal(err)
	}
	foreign := newForeignIssuer(t, "https://foreign.example")
	conf := "[[export]]\nprefix = \"/store\"\npools = [" + quote(pool) + "]\n" +
		"[cache]\ndir = " + quote(cacheDir) + "\nram = \"64MiB\"\n" +
		"[[cache.route]]\nprefix = \"/remote\"\nupstreams = [" + quote(upstream.rootURL) + "]\n" +
		"[[auth.namespace]]\nprefix = \"/store\"\nread = \"vo\"\nvos = [\"cms\"]\n" +
		"[[auth.namespace]]\nprefix = \"/remote\"\nread = \"vo\"\nvos = [\"cms\"]\n" +
		jconf + foreign.conf()

	box, err := tryJobsBox(t, conf)
	if err == nil {
		t.Errorf("a jobs box started with its pool %s (mode 0755) open to %s", pool, diskSlot)
		jobReadsDisk(t, box, foreign, pool, cacheDir, cachedSecret)
		box.proc.Stop()
	} else {
		refusal, _, _ := strings.Cut(err.Error(), "\n[server]") // the config follows
		t.Logf("refused: %s", refusal)
		for _, want := range []string{"export[1].pools", diskSlot, "can read " + pool, "chmod o-rwx " + pool} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal does not say %q:\n%v", want, err)
			}
		}
	}

	if err := os.Chmod(pool, 0o750); err != nil {
		t.Fatal(err)
	}
	box, err = tryJobsBox(t, conf)
	if err != nil {
		t.Fatalf("a jobs box with its pool 0750: %v", err)
	}
	jobReadsDisk(t, box, foreign, pool, cacheDir, cachedSecret)
}

// tryJobsBox starts a box that is its own issuer (for the cms VO), or
// says why it did not start.
func tryJobsBox(t *testing.T, conf string) (*issuerNode, error) {
	t.Helper()
	spec := prepareNode(t, 0)
	run(t, false, siteboxBin, "token", "keygen", "--state-dir", spec.state)
	iss := spec.httpsURL()
	auth := "[auth]\nsite_issuer = true\nissuer_url = " + quote(iss) + "\nsite_issuer_vos = [\"cms\"]\n"
	n, err := spec.tryStart(t, "jobs", "T3", auth+conf)
	if err != nil {
		return nil, err
	}
	return &issuerNode{fedNode: n, issuer: iss}, nil
}

// jobReadsDisk puts a file into the pool and fills the cache with the
// site's cms user's token, then has a job submitted with a foreign
// issuer's compute-only token cat both from the disk: each read must be
// refused.
func jobReadsDisk(t *testing.T, box *issuerNode, foreign *foreignIssuer, pool, cacheDir, cachedSecret string) {
	t.Helper()
	alice := box.token(t, "alice", "/cms", "storage.read:/,storage.create:/store")
	curl := func(args ...string) {
		t.Helper()
		base := []string{"-sSf", "--cacert", box.certFile, "-H", "Authorization: Bearer " + alice}
		if out, err := runEnv(t, nil, "curl", append(base, args...)...); err != nil {
			t.Fatalf("curl %v: %v: %s", args, err, out)
		}
	}
	n := strconv.FormatInt(time.Now().UnixNano(), 36) // each call its own file
	putSecret := "put-secret-" + n
	curl("-X", "PUT", "--data-binary", putSecret, box.httpsURL+"/store/cms/written-"+n)
	put := filepath.Join(pool, "cms", "written-"+n)
	for _, p := range []string{filepath.Dir(put), put} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o007 != 0 {
			t.Errorf("the PUT made %s with mode %v (%v): open to others", p, fi.Mode(), err)
		}
	}
	curl("-o", os.DevNull, box.httpsURL+"/remote/cms/cached.txt")
	cached := filepath.Join(cacheDir, "data", "remote", "cms", "cached.txt")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if b, _ := os.ReadFile(cached); strings.Contains(string(b), cachedSecret) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache never wrote %s", cached)
		}
	}

	mallory := &jobUser{t: t, n: box, token: foreign.token(t, "mallory", "", "compute.create compute.read"), dir: t.TempDir()}
	id := mallory.submit("steal.sub", "executable = /bin/sh\narguments = \"-c 'cat "+put+" 2>&1 || echo POOL-DENIED; cat "+cached+" 2>&1 || echo CACHE-DENIED'\"\nqueue\n")[0]
	mallory.wait(id, jobs.Completed, 60*time.Second)
	out, _ := mallory.cli("logs", id)
	t.Logf("the foreign job:\n%s", out)
	if strings.Count(out, "Permission denied") != 2 {
		t.Errorf("the job's reads did not both end in permission denied")
	}
	if strings.Contains(out, putSecret) || !strings.Contains(out, "POOL-DENIED") {
		t.Errorf("a job with a foreign compute-only token read %s from the pool", put)
	}
	if strings.Contains(out, cachedSecret) || !strings.Contains(out, "CACHE-DENIED") {
		t.Errorf("a job with a foreign compute-only token read %s from the cache", cached)
	}
}
