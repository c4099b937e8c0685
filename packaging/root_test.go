package packaging

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/test/peers"
)

// rootTools are the programs the maintainer scripts run; dpkg runs the
// scripts chrooted into the throwaway root, so they are copied there with
// their libraries.
var rootTools = []string{"sh", "getent", "groupadd", "useradd", "stat", "chown", "chgrp", "chmod", "install", "rm", "rmdir", "mkdir"}

// makeRoot builds a minimal merged-/usr root: the tools, their libraries,
// account files with root alone, and an empty dpkg database.
func makeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "tmp", "run", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	if err := syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Fatalf("mknod /dev/null: %v", err)
	}
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		os.Symlink("usr/"+l, filepath.Join(root, l))
	}
	libs := map[string]bool{}
	for _, tool := range rootTools {
		p := need(t, tool)
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, real, filepath.Join(root, "usr", filepath.Base(filepath.Dir(p)), tool))
		out, _ := exec.Command("ldd", real).Output()
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "/") {
				libs[f] = true
			}
		}
	}
	for l := range libs {
		real, err := filepath.EvalSymlinks(l)
		if err != nil {
			t.Fatal(err)
		}
		copyFile(t, real, filepath.Join(root, l))
	}
	files := map[string]string{
		"etc/passwd":             "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":              "root:x:0:\n",
		"etc/shadow":             "root:*:19000:0:99999:7:::\n",
		"etc/gshadow":            "root:*::\n",
		"etc/nsswitch.conf":      "passwd: files\ngroup: files\nshadow: files\ngshadow: files\n",
		"var/lib/dpkg/status":    "",
		"var/lib/dpkg/available": "",
	}
	if b, err := os.ReadFile("/etc/login.defs"); err == nil {
		files["etc/login.defs"] = string(b)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// dpkgIn runs dpkg on the throwaway root. Its dependency (passwd) is the
// copied tools, not a package there.
func dpkgIn(t *testing.T, root string, args ...string) string {
	t.Helper()
	return run(t, "dpkg", append([]string{"--root=" + root, "--force-depends", "--force-confold", "--log=/dev/null"}, args...)...)
}

// owner is a path's uid, gid and permission bits.
func owner(t *testing.T, path string) (uid, gid uint32, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode().Perm()
}

// account finds the sitebox user's passwd line in the root.
func account(t *testing.T, root string) (line string, uid, gid uint32, n int) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "sitebox:") {
			line, n = l, n+1
			fmt.Sscanf(strings.Join(strings.Split(l, ":")[2:4], " "), "%d %d", &uid, &gid)
		}
	}
	return line, uid, gid, n
}

func installInRoot(t *testing.T, deb string) {
	if os.Geteuid() != 0 {
		t.Skip("installing into a throwaway root needs root (dpkg chroots to run the scripts)")
	}
	need(t, "dpkg")
	need(t, "ldd")
	root := makeRoot(t)
	dpkgIn(t, root, "-i", deb)

	line, uid, gid, n := account(t, root)
	if n != 1 || uid == 0 || uid >= 1000 || !strings.HasSuffix(line, ":/var/lib/sitebox:/usr/sbin/nologin") {
		t.Fatalf("sitebox account: %q (%d lines), want one system user with no login", line, n)
	}
	for _, c := range []struct {
		path     string
		uid, gid uint32
		mode     fs.FileMode
	}{
		{"var/lib/sitebox", uid, gid, 0o700},
		{"var/lib/sitebox-jobs", uid, gid, 0o700},
		{"var/cache/sitebox", uid, gid, 0o700},
		{"srv/sitebox/data", uid, gid, 0o750},
		{"etc/sitebox", 0, gid, 0o750},
		{"etc/sitebox/sitebox.toml", 0, gid, 0o640},
		{"usr/bin/sitebox", 0, 0, 0o755},
	} {
		if u, g, m := owner(t, filepath.Join(root, c.path)); u != c.uid || g != c.gid || m != c.mode {
			t.Errorf("/%s: %d:%d %v, want %d:%d %v", c.path, u, g, m, c.uid, c.gid, c.mode)
		}
	}
	// The installed box, as its own user, accepts the installed config.
	ids := fmt.Sprintf("--userspec=%d:%d", uid, gid)
	run(t, "chroot", ids, root, "/usr/bin/sitebox", "config", "check", "/etc/sitebox/sitebox.toml")
	// mount(8)'s helper for type fuse.sitebox is the installed binary:
	// it answers as the helper (mount -f mounts nothing).
	run(t, "chroot", root, "/sbin/mount.fuse.sitebox", "root://cache.site:1094//store", "/fed", "-f", "-o", "ro,_netdev")
	if out, err := exec.Command("chroot", root, "/sbin/mount.fuse.sitebox").CombinedOutput(); err == nil || !strings.Contains(string(out), "usage: mount.fuse.sitebox URL DIR") {
		t.Errorf("the installed mount helper without arguments: %v: %s", err, out)
	}

	serveInRoot(t, root, ids)

	// An operator's edits, modes and state survive an upgrade.
	conf := filepath.Join(root, "etc/sitebox/sitebox.toml")
	f, _ := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("# edited by the operator\n")
	f.Close()
	os.Chown(conf, int(uid), int(gid))
	os.Chmod(conf, 0o600)
	os.WriteFile(filepath.Join(root, "var/lib/sitebox/keep"), nil, 0o600)
	dpkgIn(t, root, "-i", deb)
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "edited by the operator") {
		t.Error("the upgrade replaced the operator's config")
	}
	if u, _, m := owner(t, conf); u != uid || m != 0o600 {
		t.Errorf("the upgrade changed the config's owner or mode: %d %v", u, m)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/sitebox/keep")); err != nil {
		t.Error("the upgrade lost the box's state")
	}
	if _, _, _, n := account(t, root); n != 1 {
		t.Errorf("%d sitebox accounts after the upgrade", n)
	}

	// remove keeps state and config; purge deletes them, never the data.
	dpkgIn(t, root, "--remove", "sitebox")
	for _, p := range []string{"var/lib/sitebox/keep", "etc/sitebox/sitebox.toml"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("remove deleted /%s", p)
		}
	}
	dpkgIn(t, root, "--purge", "sitebox")
	for _, p := range []string{"var/lib/sitebox", "var/cache/sitebox", "etc/sitebox", "usr/bin/sitebox"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("purge left /%s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "srv/sitebox/data")); err != nil {
		t.Error("purge deleted the data pool")
	}
}

// serveInRoot starts the installed box as the sitebox user on the
// installed sample config (on free loopback ports) and reads a file of
// the sample's pool over https://, as `systemctl start sitebox` would.
func serveInRoot(t *testing.T, root, ids string) {
	t.Helper()
	rp, _ := peers.FreePort()
	hp, _ := peers.FreePort()
	b, err := os.ReadFile(filepath.Join(root, "etc/sitebox/sitebox.toml"))
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.NewReplacer(`"0.0.0.0:1094"`, fmt.Sprintf(`"127.0.0.1:%d"`, rp), `"0.0.0.0:8443"`, fmt.Sprintf(`"127.0.0.1:%d"`, hp)).Replace(string(b))
	if !strings.Contains(conf, fmt.Sprint(rp)) || !strings.Contains(conf, fmt.Sprint(hp)) {
		t.Fatalf("the sample config's listen addresses changed; update this test:\n%s", b)
	}
	os.WriteFile(filepath.Join(root, "etc/sitebox/probe.toml"), []byte(conf), 0o644)
	os.WriteFile(filepath.Join(root, "srv/sitebox/data/hello.txt"), []byte("hello from the package\n"), 0o644)
	p, err := peers.StartSitebox(context.Background(), "chroot", []int{rp, hp}, ids, root, "/usr/bin/sitebox", "serve", "--config", "/etc/sitebox/probe.toml")
	if err != nil {
		t.Fatalf("the installed box does not start: %v", err)
	}
	defer p.Stop()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Get(fmt.Sprintf("https://127.0.0.1:%d/store/hello.txt", hp))
	if err != nil {
		t.Fatalf("GET from the installed box: %v\n%s", err, p.Log)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from the package\n" {
		t.Errorf("GET /store/hello.txt: %d %q\n%s", resp.StatusCode, body, p.Log)
	}
	os.Remove(filepath.Join(root, "etc/sitebox/probe.toml"))
}
