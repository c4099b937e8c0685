package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"sitebox/test/peers"
)

// TestDirectorNamespace changes the namespace through a director with
// real clients: davix and gfal2 over https, xrdfs over root://. Each
// operation is redirected to the origin that holds (or will hold) the
// path, and an upload through the director is visible through it at once
// (gfal-copy -K ADLER32 reads the checksum back through the director).
func TestDirectorNamespace(t *testing.T) {
	for _, tool := range []string{"xrdfs", "xrdcp", "davix-mkdir", "davix-rm", "gfal-mkdir", "gfal-rename", "gfal-rm", "gfal-copy"} {
		peers.Require(t, tool)
	}
	dir := startFedNode(t, "dir", "A", "[director]\nenabled = true\nlocate_timeout = \"2s\"\n")
	pool := t.TempDir()
	startFedNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = ["+strconv.Quote(pool)+"]\n"+advertiseTo(dir, "500ms"))
	writeRandom(t, filepath.Join(pool, "seed"), 10)
	waitFor(t, 15*time.Second, "the origin in the director's registry", func() bool {
		_, err := run(t, true, "xrdfs", dir.rootHost, "stat", "/store/seed")
		return err == nil
	})
	local := func(p string) string { return filepath.Join(pool, filepath.FromSlash(p)) }
	isDir := func(p string) bool { fi, err := os.Stat(local(p)); return err == nil && fi.IsDir() }
	exists := func(p string) bool { _, err := os.Stat(local(p)); return err == nil }
	d := dir.httpsURL + "/store/"

	t.Run("davix", func(t *testing.T) {
		davix := func(tool string, args ...string) {
			t.Helper()
			run(t, false, tool, append([]string{"-k"}, args...)...)
		}
		davix("davix-mkdir", d+"dav")
		if !isDir("dav") {
			t.Fatal("davix-mkdir through the director made no directory on the origin")
		}
		writeRandom(t, local("dav/sub/f"), 1000)
		davix("davix-rm", d+"dav") // DELETE of a collection is recursive (RFC 4918)
		if exists("dav") {
			t.Error("davix-rm of a tree through the director left the tree on the origin")
		}
	})

	t.Run("gfal", func(t *testing.T) {
		gfal := func(tool string, args ...string) {
			t.Helper()
			gfalRun(t, tool, append([]string{"-D", "HTTP PLUGIN:INSECURE=true"}, args...)...)
		}
		gfal("gfal-mkdir", "-p", d+"g/a/b")
		if !isDir("g/a/b") {
			t.Fatal("gfal-mkdir -p through the director made no directories on the origin")
		}
		upFile := filepath.Join(t.TempDir(), "up.bin")
		src := writeRandom(t, upFile, 3<<20+5)
		// The director was asked about the destination before the upload
		// (gfal checks it exists): its "not found" must not outlive the PUT.
		if out, err := gfalCopy(t, "", "file://"+upFile, d+"g/a/b/up.bin"); err != nil {
			t.Fatalf("gfal-copy -K ADLER32 through the director: %v\n%s", err, out)
		}
		sameFile(t, local("g/a/b/up.bin"), src)
		gfal("gfal-rename", d+"g/a/b/up.bin", d+"g/a/moved.bin")
		if exists("g/a/b/up.bin") || !exists("g/a/moved.bin") {
			t.Error("gfal-rename through the director did not rename on the origin")
		}
		// A COPY within the federation: the Destination names the director.
		run(t, false, "curl", "-sSfk", "-L", "-X", "COPY", "-H", "Destination: "+d+"g/copy.bin", d+"g/a/moved.bin")
		sameFile(t, local("g/copy.bin"), src)
		gfal("gfal-rm", "-r", d+"g")
		if exists("g") {
			t.Error("gfal-rm -r through the director left the tree on the origin")
		}
	})

	t.Run("xrdfs", func(t *testing.T) {
		run(t, false, "xrdfs", dir.rootHost, "mkdir", "-p", "/store/x/y")
		if !isDir("x/y") {
			t.Fatal("xrdfs mkdir -p through the director made no directory on the origin")
		}
		writeRandom(t, local("x/y/f"), 500)
		run(t, false, "xrdfs", dir.rootHost, "mv", "/store/x/y/f", "/store/x/g")
		if exists("x/y/f") || !exists("x/g") {
			t.Error("xrdfs mv through the director did not rename on the origin")
		}
		run(t, false, "xrdfs", dir.rootHost, "chmod", "/store/x/g", "rw-r-----")
		if fi, err := os.Stat(local("x/g")); err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("xrdfs chmod through the director: mode %v, %v", fi.Mode(), err)
		}
		run(t, false, "xrdfs", dir.rootHost, "truncate", "/store/x/g", "100")
		if fi, err := os.Stat(local("x/g")); err != nil || fi.Size() != 100 {
			t.Errorf("xrdfs truncate through the director: %v", err)
		}
		run(t, false, "xrdfs", dir.rootHost, "rm", "/store/x/g")
		run(t, false, "xrdfs", dir.rootHost, "rmdir", "/store/x/y")
		if exists("x/g") || exists("x/y") {
			t.Error("xrdfs rm/rmdir through the director left files on the origin")
		}
		// A new file is found through the director at once.
		upFile := filepath.Join(t.TempDir(), "u")
		up := writeRandom(t, upFile, 2000)
		if _, err := run(t, true, "xrdfs", dir.rootHost, "stat", "/store/x/new"); err == nil {
			t.Fatal("stat of a missing file through the director succeeded")
		}
		run(t, false, "xrdcp", "-f", upFile, dir.rootURL+"//store/x/new")
		sameFile(t, local("x/new"), up)
		run(t, false, "xrdfs", dir.rootHost, "stat", "/store/x/new")
	})
}

// gfalRun runs one gfal2 command line tool with the system Python.
func gfalRun(t *testing.T, tool string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = append(os.Environ(), "BEARER_TOKEN=ns-test")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		cmd.Env = append(cmd.Env, "GFAL_PYTHONBIN=/usr/bin/python3")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", tool, args, err, out)
	}
	return string(out)
}
