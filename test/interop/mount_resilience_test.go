package interop

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// uncached are the mount flags that make every access reach the server:
// nothing kept by the kernel or the mount, so a test sees what the
// server's absence does to each request.
var uncached = []string{"--attr-timeout", "0", "--entry-timeout", "0", "--negative-timeout", "0", "--dir-ttl", "0"}

// relaunch starts b's sitebox again on the same ports, as a restart
// after a crash would (b.proc must have ended), with args, or with the
// command line it was first started with when args is empty.
func relaunch(t *testing.T, b *box, args ...string) {
	t.Helper()
	if len(args) == 0 {
		args = b.args
	}
	rp, _ := strconv.Atoi(b.rootHost[strings.LastIndex(b.rootHost, ":")+1:])
	hp, _ := strconv.Atoi(b.httpsURL[strings.LastIndex(b.httpsURL, ":")+1:])
	p, err := peers.StartSitebox(context.Background(), siteboxBin, []int{rp, hp}, args...)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("restarted sitebox log:\n%s", tail(p.Log.String(), 4000))
		}
	})
	b.proc = p
}

// mountURL is the URL of b's /store over scheme ("root" or "https") and
// the flags a mount of it needs.
func mountURL(b *box, scheme string) (string, []string) {
	if scheme == "https" {
		return b.httpsURL + "/store", []string{"--ca", b.certFile}
	}
	return b.rootURL + "//store", nil
}

// readAt reads n bytes at off from f and compares them with want's.
func readAt(t *testing.T, f *os.File, want []byte, off, n int) {
	t.Helper()
	got := make([]byte, n)
	if _, err := f.ReadAt(got, int64(off)); err != nil {
		t.Fatalf("read of %d bytes at %d of the open file: %v", n, off, err)
	}
	if !bytes.Equal(got, want[off:off+n]) {
		t.Fatalf("read of %d bytes at %d of the open file: wrong bytes", n, off)
	}
}

// mountWorks: ls, stat and cat answer through the mount.
func mountWorks(t *testing.T, m *mounted, big []byte) {
	t.Helper()
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatalf("ls: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "a.txt") || !slices.Contains(names, "big.bin") {
		t.Errorf("ls: %v", names)
	}
	if fi, err := os.Stat(filepath.Join(m.dir, "big.bin")); err != nil || fi.Size() != int64(len(big)) {
		t.Errorf("stat big.bin: %v, %v", fi, err)
	}
	sameFile(t, filepath.Join(m.dir, "a.txt"), []byte("hello\n"))
}

// TestMountServerRestart: a root:// and an https:// mount (and a root://
// one reading through a local cache) survive their server's crash and
// restart on the same ports without a remount: a file open across the
// restart reads on (the client opens it again on a new connection), ls,
// stat and cat work afterwards, and a request made while the server is
// down for a moment waits for it instead of failing.
func TestMountServerRestart(t *testing.T) {
	requireFUSE(t)
	for _, scheme := range []string{"root", "https", "root+cache-dir"} {
		t.Run(scheme, func(t *testing.T) {
			b := startBox(t, 1)
			os.WriteFile(filepath.Join(b.pools[0], "a.txt"), []byte("hello\n"), 0o644)
			big := writeRandom(t, filepath.Join(b.pools[0], "big.bin"), 24<<20)
			url, args := mountURL(b, strings.TrimSuffix(scheme, "+cache-dir"))
			if strings.HasSuffix(scheme, "+cache-dir") {
				args = append(args, "--cache-dir", t.TempDir())
			}
			m := startMount(t, url, append(append(args, uncached...), "--timeout", "20s")...)

			f, err := os.Open(filepath.Join(m.dir, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			readAt(t, f, big, 0, 1<<20)

			// A crash and a restart with the file open: its next read
			// (past the kernel's read-ahead) reaches the new process.
			b.proc.Kill()
			relaunch(t, b)
			readAt(t, f, big, 16<<20, 1<<20)
			mountWorks(t, m, big)

			// Down while idle, asked while down: ls waits for the server
			// (within --timeout) and answers once it is back.
			b.proc.Kill()
			done := make(chan error, 1)
			go func() {
				_, err := os.ReadDir(m.dir)
				done <- err
			}()
			time.Sleep(2 * time.Second)
			relaunch(t, b)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("ls while the server restarted: %v", err)
				}
			case <-time.After(40 * time.Second):
				t.Fatal("ls while the server restarted: no answer 40 s later")
			}
			mountWorks(t, m, big)
			readAt(t, f, big, 8<<20, 1<<20)
		})
	}
}

// TestMountServerGone: with the server gone for good, ls, stat, cat and
// a read of a file left open fail with EIO once --timeout has passed
// (never hang), and the mount works again, without a remount, once the
// server is back.
func TestMountServerGone(t *testing.T) {
	requireFUSE(t)
	for _, scheme := range []string{"root", "https"} {
		t.Run(scheme, func(t *testing.T) {
			const timeout = 5 * time.Second
			b, big, m, f := outageMount(t, scheme, timeout)

			b.proc.Kill()
			wantEIOWithin(t, "with the server gone", timeout+10*time.Second, 60*time.Second, []mountOp{
				{"ls", func() error { _, err := os.ReadDir(m.dir); return err }},
				{"stat", func() error { _, err := os.Stat(filepath.Join(m.dir, "a.txt")); return err }},
				{"cat", func() error { _, err := os.ReadFile(filepath.Join(m.dir, "a.txt")); return err }},
				{"read of the open file", func() error { _, err := f.ReadAt(make([]byte, 4096), 20<<20); return err }},
			})
			if !m.logs("refused") {
				t.Errorf("the mount's log says nothing of the failures:\n%s", m.log.String())
			}

			relaunch(t, b)
			mountWorks(t, m, big)
			readAt(t, f, big, 20<<20, 1<<20)
		})
	}
}

// TestMountDirectorFailover: a read-only root:// mount of a director
// with two origins holding the same file. Each origin in turn is killed
// while the file is open (restarting the first before the second goes):
// whichever served it, the next read is served by the other, found
// through the director again (tried= names the dead one).
func TestMountDirectorFailover(t *testing.T) {
	requireFUSE(t)
	dir := startFedNode(t, "dir", "D", "[director]\nenabled = true\nstartup_wait = \"1s\"\n")
	poolA, poolB := t.TempDir(), t.TempDir()
	big := writeRandom(t, filepath.Join(poolA, "big.bin"), 48<<20)
	if err := os.WriteFile(filepath.Join(poolB, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	export := func(pool string) string { return "[[export]]\nprefix = \"/store\"\npools = [" + quote(pool) + "]\n" }
	a := startFedNode(t, "originA", "A", export(poolA)+advertiseTo(dir, "500ms"))
	b := startFedNode(t, "originB", "B", export(poolB)+advertiseTo(dir, "500ms"))
	bothSeen := func() {
		waitFor(t, 20*time.Second, "both origins at the director", func() bool {
			out, _ := run(t, true, siteboxBin, "federation", dir.httpsURL, "--ca", dir.certFile)
			return strings.Count(out, " ok (seen") == 2
		})
	}
	bothSeen()

	m := startMount(t, dir.rootURL+"//store", "-r", "--timeout", "20s")
	f, err := os.Open(filepath.Join(m.dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	readAt(t, f, big, 0, 1<<20)

	a.proc.Kill()
	readAt(t, f, big, 16<<20, 1<<20)
	relaunch(t, a.box, "serve", "--config", filepath.Join(a.state, "sitebox.toml"))
	bothSeen()
	b.proc.Kill()
	readAt(t, f, big, 32<<20, 1<<20)
}

// TestMountServerStopped: a server that keeps its connections but stops
// answering (SIGSTOP: a hung process, a machine swapping) fails ls,
// stat and the reads of an open file with EIO once --timeout has passed,
// never hangs them; once it answers again, the mount works again.
func TestMountServerStopped(t *testing.T) {
	requireFUSE(t)
	for _, scheme := range []string{"root", "https"} {
		t.Run(scheme, func(t *testing.T) {
			const timeout = 5 * time.Second
			b, big, m, f := outageMount(t, scheme, timeout)

			pid := b.proc.Cmd.Process.Pid
			syscall.Kill(pid, syscall.SIGSTOP)
			defer syscall.Kill(pid, syscall.SIGCONT)
			wantEIOWithin(t, "with the server stopped", timeout+15*time.Second, 90*time.Second, []mountOp{
				{"ls", func() error { _, err := os.ReadDir(m.dir); return err }},
				{"read of the open file", func() error { _, err := f.ReadAt(make([]byte, 4096), 20<<20); return err }},
			})
			syscall.Kill(pid, syscall.SIGCONT)
			mountWorks(t, m, big)
			readAt(t, f, big, 20<<20, 1<<20)
		})
	}
}

// outageMount starts a box holding a.txt and a 24 MiB big.bin, mounts it
// over scheme with --timeout and no kernel caching, and opens big.bin
// with its first MiB read; the file is closed when the test ends.
func outageMount(t *testing.T, scheme string, timeout time.Duration) (*box, []byte, *mounted, *os.File) {
	t.Helper()
	b := startBox(t, 1)
	os.WriteFile(filepath.Join(b.pools[0], "a.txt"), []byte("hello\n"), 0o644)
	big := writeRandom(t, filepath.Join(b.pools[0], "big.bin"), 24<<20)
	url, args := mountURL(b, scheme)
	m := startMount(t, url, append(append(args, uncached...), "--timeout", timeout.String())...)
	f, err := os.Open(filepath.Join(m.dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	readAt(t, f, big, 0, 1<<20)
	return b, big, m, f
}

// mountOp is a call on the mount a test expects to fail.
type mountOp struct {
	name string
	do   func() error
}

// wantEIOWithin runs each op with the server unreachable (how says
// how) and wants EIO within bound (the user's --timeout plus room for a
// busy machine), and an answer at all within hang.
func wantEIOWithin(t *testing.T, how string, bound, hang time.Duration, ops []mountOp) {
	t.Helper()
	for _, op := range ops {
		start := time.Now()
		done := make(chan error, 1)
		go func() { done <- op.do() }()
		select {
		case err := <-done:
			took := time.Since(start)
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("%s %s: %v, want EIO", op.name, how, err)
			}
			if took > bound {
				t.Errorf("%s %s took %v (at most %v)", op.name, how, took, bound)
			}
			t.Logf("%s %s: %v after %v", op.name, how, err, took.Round(time.Millisecond))
		case <-time.After(hang):
			t.Fatalf("%s %s: no answer after %v", op.name, how, hang)
		}
	}
}
