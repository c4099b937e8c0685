package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/test/peers"
)

// entries lists dir's names ("" for a missing dir).
func entries(dir string) []string {
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// waitEntries waits until ok accepts dir's names.
func waitEntries(t *testing.T, dir string, within time.Duration, what string, ok func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok(entries(dir)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s holds %v", what, dir, entries(dir))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isEmpty(names []string) bool { return len(names) == 0 }

// xrdcp --posc: the file appears under its name only after a successful
// close; a cut upload leaves nothing.
func TestPoscXrdcp(t *testing.T) {
	peers.Require(t, "xrdcp")
	b := startBox(t, 1)
	src := filepath.Join(t.TempDir(), "src")
	data := writeRandom(t, src, 5<<20)
	dir := filepath.Join(b.pools[0], "posc")

	run(t, false, "xrdcp", "--posc", src, b.rootURL+"//store/posc/ok.bin")
	sameFile(t, filepath.Join(dir, "ok.bin"), data)
	if names := entries(dir); len(names) != 1 {
		t.Fatalf("after a successful --posc upload the directory holds %v", names)
	}

	// An upload from a pipe that stops in the middle, then the client is
	// killed: the data reached the server under a temporary name only.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xrdcp", "--posc", "-", b.rootURL+"//store/posc/cut.bin")
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=20", "XRD_CONNECTIONRETRY=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	go stdin.Write(make([]byte, 20<<20)) // more than one 8 MiB chunk, then nothing
	waitEntries(t, dir, 30*time.Second, "upload in progress", func(names []string) bool {
		for _, n := range names {
			if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && strings.HasPrefix(n, ".sitebox-upload-") && fi.Size() > 0 {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(dir, "cut.bin")); !os.IsNotExist(err) {
		t.Fatalf("cut.bin exists under its final name before the close: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	waitEntries(t, dir, 30*time.Second, "after the client was killed", func(names []string) bool {
		return len(names) == 1 && names[0] == "ok.bin"
	})
	run(t, false, "xrdfs", b.rootHost, "ls", "/store/posc") // still serves; listing works
}

// mountTmpfs mounts a tmpfs of size at a fresh directory (root only).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") == "true" && os.Geteuid() == 0 {
			t.Fatalf("mount tmpfs: %v", err)
		}
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// On a full disk a --posc upload fails and leaves nothing, over root:// as
// a failed PUT does over https://.
func TestPoscFullDisk(t *testing.T) {
	peers.Require(t, "xrdcp")
	peers.Require(t, "curl")
	full := mountTmpfs(t, "2m")
	b := startBox(t, 1, "--export", "/full="+full)
	src := filepath.Join(t.TempDir(), "src")
	writeRandom(t, src, 4<<20)

	out, err := run(t, true, "xrdcp", "--posc", src, b.rootURL+"//full/f.bin")
	if err == nil {
		t.Fatalf("xrdcp --posc to a full disk succeeded: %s", out)
	}
	t.Logf("xrdcp --posc to a full disk: %s", strings.TrimSpace(out))
	if !strings.Contains(out, "/full/f.bin") || strings.Contains(out, ".sitebox-upload-") {
		t.Errorf("the error should name /full/f.bin, not the temporary file: %s", out)
	}
	waitEntries(t, full, 30*time.Second, "after the failed --posc upload", isEmpty)

	code, _ := run(t, true, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", b.certFile, "-T", src, b.httpsURL+"/full/g.bin")
	if code != "507" {
		t.Errorf("PUT to a full disk: status %s, want 507", code)
	}
	waitEntries(t, full, 30*time.Second, "after the failed PUT", isEmpty)
}
