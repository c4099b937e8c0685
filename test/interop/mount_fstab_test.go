package interop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sitebox/test/peers"
)

// requireRootMount fails under CI (skips elsewhere) unless the test runs
// as root: mount(8) and its helpers mount as root.
func requireRootMount(t *testing.T) {
	t.Helper()
	requireFUSE(t)
	if os.Geteuid() != 0 {
		peers.RequireFile(t, filepath.Join(t.TempDir(), "running-as-root"), "root (mount(8) and its helpers)")
	}
}

// helperDir is a directory holding the fresh binary under the names
// mount(8) and mount.fuse3 run it by: mount.fuse.sitebox and sitebox.
func helperDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin, err := filepath.Abs(siteboxBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mount.fuse.sitebox", "sitebox"} {
		if err := os.Symlink(bin, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// serving lists the processes whose command line names dir: the
// background mounts of dir.
func serving(dir string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), "\x00"+dir+"\x00") && !strings.HasSuffix(string(b), "\x00"+dir) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cleanupMount takes away whatever a background mount of dir left.
func cleanupMount(t *testing.T, dir string) {
	t.Cleanup(func() {
		if isMounted(dir) {
			exec.Command("umount", "-l", dir).Run()
		}
		for _, pid := range serving(dir) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	})
}

// runHelper runs a mount helper as mount(8) would and returns its
// output and exit status.
func runHelper(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %v did not return within a minute: %s", name, args, out)
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return string(out), 0
}

// TestMountHelper: mount.fuse.sitebox, run as mount(8) runs it for the
// fstab line "SOURCE DIR fuse.sitebox ro,allow_other,_netdev,...",
// returns once the filesystem is mounted, leaving one process serving it
// in a session of its own; the files read; `umount DIR` ends that
// process. mount.fuse3, which mount(8) runs when the helper is missing,
// does the same through "sitebox SOURCE DIR -o OPTIONS". A mount that
// fails says why, exits 32 and leaves nothing behind.
func TestMountHelper(t *testing.T) {
	requireRootMount(t)
	b := startBox(t, 1)
	big := writeRandom(t, filepath.Join(b.pools[0], "sub", "big.bin"), 3<<20+5)
	bin := helperDir(t)
	source := b.rootURL + "//store"

	t.Run("mount.fuse.sitebox", func(t *testing.T) {
		dir, logFile := t.TempDir(), filepath.Join(t.TempDir(), "mount.log")
		cleanupMount(t, dir)
		opts := "ro,allow_other,_netdev,nofail,x-systemd.automount,defaults,nosuid,nodev,noexec,dir_ttl=5s,log_file=" + logFile
		out, code := runHelper(t, nil, filepath.Join(bin, "mount.fuse.sitebox"), source, dir, "-n", "-o", opts)
		if code != 0 {
			t.Fatalf("mount.fuse.sitebox: exit %d: %s", code, out)
		}
		if !isMounted(dir) {
			t.Fatalf("mount.fuse.sitebox returned before %s was mounted: %s", dir, out)
		}
		sameFile(t, filepath.Join(dir, "sub", "big.bin"), big)
		if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err == nil {
			t.Error("-o ro: a write worked")
		}
		if flags := mountFlags(dir); !strings.Contains(","+flags+",", ",noexec,") || !strings.Contains(","+flags+",", ",nosuid,") {
			t.Errorf("the kernel's flags of the mount: %q, want noexec and nosuid", flags)
		}
		pids := serving(dir)
		if len(pids) != 1 {
			t.Fatalf("processes serving %s: %v, want one", dir, pids)
		}
		// setsid: the server leads a session of its own, away from the
		// terminal and signals of whoever ran mount.
		if sid, err := sessionOf(pids[0]); err != nil || sid != pids[0] {
			t.Errorf("the background mount's session: %d, %v; want its own (%d)", sid, err, pids[0])
		}
		unmountEnds(t, dir, pids[0])
		if log, _ := os.ReadFile(logFile); !strings.Contains(string(log), "msg=mounted") || !strings.Contains(string(log), "msg=unmounted") {
			t.Errorf("the log file does not tell the mount and the unmount:\n%s", log)
		}
	})

	// mount(8) itself, from an fstab line and from the command line: in
	// a mount namespace of its own where /usr/sbin (/sbin) also holds the
	// helper, as the package installs it, the system's left as it is.
	t.Run("mount(8)", func(t *testing.T) {
		peers.Require(t, "unshare")
		dir, logFile, work := t.TempDir(), filepath.Join(t.TempDir(), "mount.log"), t.TempDir()
		cleanupMount(t, dir)
		up, ovl := filepath.Join(work, "up"), filepath.Join(work, "work")
		os.Mkdir(up, 0o755)
		os.Mkdir(ovl, 0o755)
		helper, _ := os.Readlink(filepath.Join(bin, "mount.fuse.sitebox"))
		if err := os.Symlink(helper, filepath.Join(up, "mount.fuse.sitebox")); err != nil {
			t.Fatal(err)
		}
		fstab := filepath.Join(work, "fstab")
		line := source + " " + dir + " fuse.sitebox ro,allow_other,_netdev,nofail,log_file=" + logFile + " 0 0\n"
		if err := os.WriteFile(fstab, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(b.pools[0], "sub", "big.bin")
		script := `set -e
mount -t overlay overlay -o lowerdir=/usr/sbin,upperdir="$1",workdir="$2" /usr/sbin
mount -T "$3" "$4"
grep -q " $4 fuse.sitebox " /proc/self/mounts
cmp "$4/sub/big.bin" "$5"
umount "$4"
mount -t fuse.sitebox -o ro,protection=integrity,log_file="$7" "$6" "$4"
cmp "$4/sub/big.bin" "$5"
umount "$4"
echo all-done`
		out, err := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", up, ovl, fstab, dir, want, source, logFile).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "all-done") {
			t.Fatalf("mount(8) with the helper: %v\n%s", err, out)
		}
		for deadline := time.Now().Add(15 * time.Second); len(serving(dir)) > 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("processes %v still serve %s 15 s after umount", serving(dir), dir)
			}
		}
		if log, _ := os.ReadFile(logFile); strings.Count(string(log), "msg=unmounted") != 2 || !strings.Contains(string(log), `protection="integrity`) {
			t.Errorf("the log of the two mounts:\n%s", log)
		}
	})

	t.Run("mount.fuse3", func(t *testing.T) {
		peers.Require(t, "mount.fuse3")
		dir := t.TempDir()
		cleanupMount(t, dir)
		out, code := runHelper(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "mount.fuse3", source, dir, "-t", "fuse.sitebox", "-o", "ro,_netdev")
		if code != 0 || !isMounted(dir) {
			t.Fatalf("mount.fuse3 -t fuse.sitebox: exit %d, mounted %v: %s", code, isMounted(dir), out)
		}
		sameFile(t, filepath.Join(dir, "sub", "big.bin"), big)
		pids := serving(dir)
		if len(pids) != 1 {
			t.Fatalf("processes serving %s: %v, want one", dir, pids)
		}
		unmountEnds(t, dir, pids[0])
	})

	t.Run("failures", func(t *testing.T) {
		dir := t.TempDir()
		cleanupMount(t, dir)
		for _, c := range []struct{ source, opts, want string }{
			{b.rootURL + "//store/nope", "ro", b.rootURL + "//store/nope"},
			{source, "ro,cachedir=/tmp/x", "-o cachedir: unknown mount option"},
			{source, "ro,protection=privacy", "--protection privacy refuses " + source},
		} {
			out, code := runHelper(t, nil, filepath.Join(bin, "mount.fuse.sitebox"), c.source, dir, "-o", c.opts)
			if code != 32 || !strings.Contains(out, c.want) {
				t.Errorf("mount.fuse.sitebox %s -o %s: exit %d, %q; want 32 and %q", c.source, c.opts, code, out, c.want)
			}
			if isMounted(dir) || len(serving(dir)) > 0 {
				t.Errorf("a failed mount left a mount (%v) or processes %v", isMounted(dir), serving(dir))
			}
		}
	})
}

// mountFlags is the kernel's per-mount flags of dir (mountinfo's sixth
// field: ro, nosuid, noexec, ...).
func mountFlags(dir string) string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == dir {
			return f[5]
		}
	}
	return ""
}

// sessionOf is the session id of pid (/proc/PID/stat's sixth field).
func sessionOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 4 {
		return 0, errors.New("short stat line")
	}
	return strconv.Atoi(f[3])
}

// unmountEnds: `umount DIR` takes the mount away and its process ends.
func unmountEnds(t *testing.T, dir string, pid int) {
	t.Helper()
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		t.Fatalf("umount %s: %v: %s", dir, err, out)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if len(serving(dir)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still serves %s 15 s after umount", pid, dir)
		}
	}
	if isMounted(dir) {
		t.Errorf("%s is still mounted", dir)
	}
}

// TestMountProtection: an integrity mount reads a namespace whose server
// requires integrity, which refuses the plain reads of an auth mount, so
// the integrity mount's reads were kXR_pgread; a privacy mount over
// roots:// reads it too; privacy over plain root:// is refused.
func TestMountProtection(t *testing.T) {
	requireFUSE(t)
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "integ", "i.bin"), 2<<20+77)
	o := startIssuerNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+
		"[[auth.namespace]]\nprefix = \"/store/integ\"\nread = \"public\"\nprotection = \"integrity\"\n")
	file := filepath.Join("integ", "i.bin")

	plain := startMount(t, o.rootURL+"//store", "-r")
	if _, err := os.ReadFile(filepath.Join(plain.dir, file)); err == nil {
		t.Fatal("the server serves plain reads of its integrity namespace; the test proves nothing")
	}

	m := startMount(t, o.rootURL+"//store", "-r", "--protection", "integrity")
	sameFile(t, filepath.Join(m.dir, file), want)
	if !m.logs(`protection="integrity (page CRC32C, kXR_pgread)"`) {
		t.Errorf("the mount's log does not name its protection:\n%s", m.log.String())
	}

	p := startMount(t, "roots://"+o.rootHost+"//store", "-r", "-o", "protection=privacy,ca="+o.certFile)
	sameFile(t, filepath.Join(p.dir, file), want)
	if !p.logs(`protection="privacy (TLS for the whole session; page CRC32C, kXR_pgread)"`) {
		t.Errorf("the privacy mount's log does not name its protection:\n%s", p.log.String())
	}

	// XRootD 5.5's kXR_pgread, straight and through the mount's cache
	// (whose fetches are vector reads: one pgread per piece).
	t.Run("xrootd", func(t *testing.T) {
		data := t.TempDir()
		want := writeRandom(t, filepath.Join(data, "x.bin"), 5<<20+4097)
		host := startXrootdOrigin(t, data)
		for _, extra := range [][]string{nil, {"--cache-dir", t.TempDir()}} {
			m := startMount(t, "root://"+host+"//", append([]string{"-r", "--protection", "integrity"}, extra...)...)
			sameFile(t, filepath.Join(m.dir, "x.bin"), want)
			f, err := os.Open(filepath.Join(m.dir, "x.bin"))
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 10000)
			if n, err := f.ReadAt(buf, 3<<20+123); n != len(buf) || err != nil || !bytes.Equal(buf, want[3<<20+123:3<<20+123+len(buf)]) {
				t.Errorf("an unaligned read %v: %d, %v", extra, n, err)
			}
			f.Close()
		}
	})

	out, err := run(t, true, siteboxBin, "mount", "-r", "--protection", "privacy", o.rootURL+"//store", t.TempDir())
	if err == nil || !strings.Contains(out, "--protection privacy refuses "+o.rootURL+"//store") {
		t.Errorf("privacy over plain root://: %v: %s", err, out)
	}
}
