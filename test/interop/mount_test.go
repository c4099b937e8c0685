package interop

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sitebox/test/peers"
)

// mounted is a running `sitebox mount`.
type mounted struct {
	dir  string
	cmd  *exec.Cmd
	log  *peers.LogBuffer
	done chan struct{} // closed when the command has ended, with err
	err  error
}

// requireFUSE fails under CI (skips elsewhere) without what a mount
// needs: /dev/fuse, and root (mount(2)) or fusermount3.
func requireFUSE(t *testing.T) {
	t.Helper()
	peers.RequireFile(t, "/dev/fuse", "FUSE (/dev/fuse)")
	if os.Geteuid() != 0 {
		peers.Require(t, "fusermount3")
	}
}

// startMount runs `sitebox mount args... URL DIR` into a new temporary
// directory and waits until the mount is there; cleanup takes it away
// even if the test killed the process.
func startMount(t *testing.T, url string, args ...string) *mounted {
	t.Helper()
	m := &mounted{dir: t.TempDir(), log: &peers.LogBuffer{}, done: make(chan struct{})}
	m.cmd = exec.Command(siteboxBin, append(append([]string{"mount"}, args...), url, m.dir)...)
	m.cmd.Stdout, m.cmd.Stderr = m.log, m.log
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		m.err = m.cmd.Wait()
		close(m.done)
	}()
	t.Cleanup(func() {
		m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			m.cmd.Process.Kill()
		}
		if isMounted(m.dir) {
			exec.Command("umount", "-l", m.dir).Run()
		}
		if t.Failed() {
			t.Logf("sitebox mount log:\n%s", m.log.String())
		}
	})
	for deadline := time.Now().Add(15 * time.Second); !isMounted(m.dir); {
		select {
		case <-m.done:
			t.Fatalf("sitebox mount exited: %v\n%s", m.err, m.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mount at %s after 15 s:\n%s", m.dir, m.log.String())
		}
	}
	return m
}

// logs reports whether the mount's log says what within a few seconds
// (the log reaches the test through a pipe, after the answer it explains).
func (m *mounted) logs(what string) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(m.log.String(), what) {
			return true
		}
	}
	return false
}

// isMounted reports whether dir is a mount point (mountinfo's fifth field).
func isMounted(dir string) bool {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// TestMount mounts a sitebox origin with `sitebox mount` and uses it as
// a program uses a local disk: ls, stat, cat, a missing name, the
// root:// URL attribute, a write read back over root:// by xrdcp, a
// rename and a removal, a failed upload seen by close(2), and an
// unmount on SIGTERM that leaves no mount behind.
func TestMount(t *testing.T) {
	requireFUSE(t)
	peers.Require(t, "xrdcp")
	b := startBox(t, 1)
	pool := b.pools[0]
	os.WriteFile(filepath.Join(pool, "a.txt"), []byte("hello\n"), 0o644)
	big := writeRandom(t, filepath.Join(pool, "sub", "big.bin"), 3<<20+17)
	// A short --timeout: the failed upload below waits that long for
	// the server before close(2) fails.
	m := startMount(t, b.rootURL+"//store", "--timeout", "3s")

	entries, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a.txt", "sub"}) || !entries[1].IsDir() {
		t.Errorf("ls: %v", names)
	}
	if fi, err := os.Stat(filepath.Join(m.dir, "sub", "big.bin")); err != nil || fi.Size() != int64(len(big)) || !fi.Mode().IsRegular() {
		t.Errorf("stat sub/big.bin: %v, %v", fi, err)
	}
	sameFile(t, filepath.Join(m.dir, "sub", "big.bin"), big)
	sameFile(t, filepath.Join(m.dir, "a.txt"), []byte("hello\n"))
	if _, err := os.Stat(filepath.Join(m.dir, "nope")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of a missing name: %v, want ENOENT", err)
	}
	buf := make([]byte, 256)
	n, err := unix.Getxattr(filepath.Join(m.dir, "sub", "big.bin"), "user.xrootd.url", buf)
	if want := b.rootURL + "//store/sub/big.bin"; err != nil || string(buf[:n]) != want {
		t.Errorf("user.xrootd.url = %q, %v; want %q", buf[:n], err, want)
	}

	checkWrites(t, b, m)

	// A file opened for appending keeps what it had: the mount reads it
	// down first (its chunks at once) and uploads the whole at close.
	af, err := os.OpenFile(filepath.Join(m.dir, "sub", "big.bin"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := af.Write([]byte("tail\n")); err != nil {
		t.Fatal(err)
	}
	if err := af.Close(); err != nil {
		t.Fatalf("close after appending: %v", err)
	}
	sameFile(t, filepath.Join(pool, "sub", "big.bin"), slices.Concat(big, []byte("tail\n")))

	// An upload that fails (the server is gone) fails close(2).
	f, err := os.Create(filepath.Join(m.dir, "lost.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte("x"), 1<<20))
	b.proc.Kill()
	if err := f.Close(); !errors.Is(err, syscall.EIO) {
		t.Errorf("close after a failed upload: %v, want EIO", err)
	}
	if !m.logs("upload failed") {
		t.Errorf("the mount's log does not say the upload failed:\n%s", m.log.String())
	}

	// SIGTERM unmounts and ends the command.
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
		if m.err != nil {
			t.Errorf("sitebox mount after SIGTERM: %v", m.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("sitebox mount did not end 20 s after SIGTERM")
	}
	if isMounted(m.dir) {
		t.Error("the mount is still there after sitebox mount ended")
	}
}

// checkWrites: a file written through the mount is on the server once
// closed (xrdcp reads it back), and mv, rm and rmdir reach the server.
func checkWrites(t *testing.T, b *box, m *mounted) {
	t.Helper()
	pool := b.pools[0]
	data := writeRandom(t, filepath.Join(m.dir, "w", "new.bin"), 5<<20+3)
	got := filepath.Join(t.TempDir(), "got")
	run(t, false, "xrdcp", "-f", b.rootURL+"//store/w/new.bin", got)
	sameFile(t, got, data)
	if err := os.Rename(filepath.Join(m.dir, "w", "new.bin"), filepath.Join(m.dir, "w", "moved.bin")); err != nil {
		t.Fatal(err)
	}
	sameFile(t, filepath.Join(pool, "w", "moved.bin"), data)
	if err := os.Remove(filepath.Join(m.dir, "w", "moved.bin")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(m.dir, "w")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(pool, "w")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("rmdir through the mount: the directory is still there (%v)", err)
	}
	if err := os.Symlink("a.txt", filepath.Join(m.dir, "link")); !errors.Is(err, syscall.EPERM) {
		t.Errorf("ln -s: %v, want EPERM (the servers keep no links)", err)
	}
}

// TestMountReadOnlyCache: a read-only mount through a local cache
// (--cache-dir) serves the file's bytes, keeps them on local disk, and
// refuses writes with EROFS.
func TestMountReadOnlyCache(t *testing.T) {
	requireFUSE(t)
	b := startBox(t, 1)
	big := writeRandom(t, filepath.Join(b.pools[0], "big.bin"), 4<<20)
	cacheDir := t.TempDir()
	m := startMount(t, b.rootURL+"//store", "-r", "--cache-dir", cacheDir)
	sameFile(t, filepath.Join(m.dir, "big.bin"), big)
	sameFile(t, filepath.Join(m.dir, "big.bin"), big)
	if st, err := os.Stat(filepath.Join(cacheDir, "data", "store", "big.bin")); err != nil || st.Size() != int64(len(big)) {
		t.Errorf("the local cache holds no copy of the file read: %v, %v", st, err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "new.txt"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("a write to a read-only mount: %v, want EROFS", err)
	}
	// A URL naming nothing is refused before anything is mounted.
	bad := b.rootURL + "//store/nope"
	if out, err := run(t, true, siteboxBin, "mount", "-r", bad, t.TempDir()); err == nil || !strings.Contains(out, bad) {
		t.Errorf("sitebox mount of a missing directory: %v: %s", err, out)
	}
}

// TestMountPerCaller: mounted by root with --allow-other, another user
// (nobody) reads anonymously, the files still root's; a token
// file of theirs owned by someone else refuses them with EACCES, the
// reason in the mount's log.
func TestMountPerCaller(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		// Only root mounts for other users; RequireFile fails this under
		// CI and skips it elsewhere, as for a missing peer.
		peers.RequireFile(t, filepath.Join(t.TempDir(), "running-as-root"), "root (--allow-other for other users)")
	}
	b := startBox(t, 1)
	os.WriteFile(filepath.Join(b.pools[0], "a.txt"), []byte("hello\n"), 0o644)
	m := startMount(t, b.rootURL+"//store", "--allow-other")
	// The other user must reach the mount point, but no one on the
	// machine should find it by listing /tmp: the mount serves anyone
	// anonymously, as the box does.
	os.Chmod(filepath.Dir(m.dir), 0o711)
	const nobody = 65534
	asNobody := func(args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody("cat", filepath.Join(m.dir, "a.txt")); err != nil || out != "hello\n" {
		t.Errorf("nobody reading anonymously: %q, %v", out, err)
	}
	// The mount's user owns the files, never the caller, whom a sweep of
	// "what this user owns" would then let remove them.
	if out, err := asNobody("stat", "-c", "%u", filepath.Join(m.dir, "a.txt")); err != nil || strings.TrimSpace(out) != "0" {
		t.Errorf("the file's owner as nobody sees it: %q, %v; want 0 (the mount's)", out, err)
	}
	planted := "/tmp/bt_u65534"
	if _, err := os.Lstat(planted); err == nil {
		t.Fatalf("%s exists already; the test would remove someone's token", planted)
	}
	if err := os.WriteFile(planted, []byte("not nobody's"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(planted)
	if out, err := asNobody("cat", filepath.Join(m.dir, "a.txt")); err == nil || !strings.Contains(out, "Permission denied") {
		t.Errorf("nobody with a token file owned by root: %q, %v; want EACCES", out, err)
	}
	if !m.logs("does not belong to uid 65534") {
		t.Errorf("the mount's log does not say why nobody was refused:\n%s", m.log.String())
	}
}

// TestMountPerCallerTokens: a mount for every user of a token-protected
// origin (roots://), run by root with --allow-other. A user with their
// own token in /tmp/bt_u<uid> lists and reads the protected directory;
// another user without one is refused it (EACCES), even right after the
// first listed it: listings are kept per credential. With --cache-dir,
// each credential reads through a cache of its own.
func TestMountPerCallerTokens(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		peers.RequireFile(t, filepath.Join(t.TempDir(), "running-as-root"), "root (--allow-other for other users)")
	}
	pool := t.TempDir()
	want := writeRandom(t, filepath.Join(pool, "prot", "data.bin"), 1<<20)
	rule := "[[auth.namespace]]\nprefix = \"/store/prot\"\nread = \"token\"\n"
	o := startIssuerNode(t, "origin", "A", "[[export]]\nprefix = \"/store\"\npools = [\""+pool+"\"]\n"+rule)
	const withToken, without = 65534, 4242
	tokFile := fmt.Sprintf("/tmp/bt_u%d", withToken)
	if _, err := os.Lstat(tokFile); err == nil {
		t.Fatalf("%s exists already; the test would replace someone's token", tokFile)
	}
	if err := os.WriteFile(tokFile, []byte(o.token(t, "alice", "", "storage.read:/store")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tokFile)
	if err := os.Chown(tokFile, withToken, withToken); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	for _, c := range []struct {
		name  string
		extra []string
	}{{"direct", nil}, {"cache-dir", []string{"--cache-dir", cacheDir}}} {
		t.Run(c.name, func(t *testing.T) {
			m := startMount(t, "roots://"+o.rootHost+"//store", append([]string{"--allow-other", "--ca", o.certFile}, c.extra...)...)
			checkTokens(t, m, withToken, without, want)
		})
	}
	// Each credential fills a cache of its own.
	if got, _ := filepath.Glob(filepath.Join(cacheDir, "*", "data", "store", "prot", "data.bin")); len(got) != 1 {
		t.Errorf("the token's cache copies: %v, want one", got)
	}
}

// checkTokens: the user with a token lists and reads /prot, the one
// without is refused it.
func checkTokens(t *testing.T, m *mounted, withToken, without uint32, want []byte) {
	os.Chmod(filepath.Dir(m.dir), 0o711) // reachable, not listable (see TestMountPerCaller)
	as := func(uid uint32, args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	prot := filepath.Join(m.dir, "prot")
	if out, err := as(withToken, "ls", prot); err != nil || strings.TrimSpace(out) != "data.bin" {
		t.Errorf("ls with a token: %q, %v", out, err)
	}
	copied := filepath.Join(t.TempDir(), "copy")
	os.Chown(filepath.Dir(copied), int(withToken), int(withToken))
	if out, err := as(withToken, "cp", filepath.Join(prot, "data.bin"), copied); err != nil {
		t.Errorf("cp with a token: %v: %s", err, out)
	} else {
		sameFile(t, copied, want)
	}
	for _, args := range [][]string{{"ls", prot}, {"cat", filepath.Join(prot, "data.bin")}} {
		if out, err := as(without, args...); err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("%v without a token: %q, %v; want EACCES", args, out, err)
		}
	}
	if !m.logs("who=anonymous") {
		t.Errorf("the mount's log does not name the anonymous refusal:\n%s", m.log.String())
	}
}

// TestMountKilled: a mount whose process is killed leaves nothing that
// hangs: accesses fail at once (ENOTCONN) and `umount -l` removes it.
func TestMountKilled(t *testing.T) {
	requireFUSE(t)
	b := startBox(t, 1)
	m := startMount(t, b.rootURL+"//store", "-r")
	m.cmd.Process.Kill()
	<-m.done
	done := make(chan error, 1)
	go func() {
		_, err := os.Stat(filepath.Join(m.dir, "anything"))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, syscall.ENOTCONN) {
			t.Errorf("stat in a dead mount: %v, want ENOTCONN", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stat in a dead mount hangs")
	}
	detach := exec.Command("umount", "-l", m.dir)
	if os.Geteuid() != 0 {
		detach = exec.Command("fusermount3", "-uz", m.dir)
	}
	if out, err := detach.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", detach.Args, err, out)
	}
	if isMounted(m.dir) {
		t.Error("the dead mount is still there after umount -l")
	}
}
