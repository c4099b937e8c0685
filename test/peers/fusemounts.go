package peers

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// FuseMount is a FUSE file system served by a child process running in
// the foreground (xrootdfs -f, rclone mount, sitebox mount) on Dir.
type FuseMount struct {
	Dir  string
	Proc *Process
}

// mountWait is how long a mount may take to appear, and an unmount to
// finish, before the helpers give up: a FUSE server that hangs must not
// hang the test or benchmark with it.
const mountWait = 20 * time.Second

// StartFuseMount runs cmd (a FUSE server that stays in the foreground)
// and waits until dir is a mount point. On any failure nothing is left
// mounted or running.
func StartFuseMount(ctx context.Context, name string, cmd *exec.Cmd, dir string) (*FuseMount, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// mountinfo names the mount point by its real path.
	dir, err := filepath.EvalSymlinks(dir)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil, err
	}
	if Mounted(dir) {
		return nil, fmt.Errorf("%s is already a mount point", dir)
	}
	p, err := start(ctx, name, cmd, nil, "")
	if err != nil {
		return nil, err
	}
	m := &FuseMount{Dir: dir, Proc: p}
	deadline := time.Now().Add(mountWait)
	for !Mounted(dir) {
		select {
		case <-p.done:
			m.Unmount()
			return nil, fmt.Errorf("%s exited before mounting %s (%v): %s", name, dir, p.err, p.tail(""))
		case <-ctx.Done():
			m.Unmount()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.Unmount()
			return nil, fmt.Errorf("%s did not mount %s in %v: %s", name, dir, mountWait, p.tail(""))
		}
	}
	return m, nil
}

// Unmount unmounts the file system and stops its server, whatever state
// either is in: `umount`, then a lazy `umount -l` if that fails (a busy or
// hung mount), then the process group is stopped. Safe to call twice.
func (m *FuseMount) Unmount() error {
	if m == nil {
		return nil
	}
	var err error
	if Mounted(m.Dir) {
		if err = runTimeout(10*time.Second, "umount", m.Dir); err != nil {
			if lerr := runTimeout(10*time.Second, "umount", "-l", m.Dir); lerr != nil {
				err = fmt.Errorf("%v; umount -l: %v", err, lerr)
			} else {
				err = nil
			}
		}
	}
	m.Proc.Stop()
	if Mounted(m.Dir) { // the server's exit makes the kernel drop it
		runTimeout(10*time.Second, "umount", "-l", m.Dir)
	}
	return err
}

func runTimeout(d time.Duration, argv ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Mounted reports whether dir (an absolute, clean path) is a mount point,
// from /proc/self/mountinfo: a stat of a hung FUSE mount would block.
func Mounted(dir string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMount(fields[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+4], "%o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// StartXrootdfs mounts rootURL (root://host:port//path/) on dir with
// xrootdfs (Debian xrootd-fuse), in the foreground. Its client gives up
// on a dead server within seconds rather than minutes.
func StartXrootdfs(ctx context.Context, rootURL, dir string) (*FuseMount, error) {
	bin, err := exec.LookPath("xrootdfs")
	if err != nil {
		return nil, fmt.Errorf("xrootdfs not installed (Debian package xrootd-fuse): %w", err)
	}
	cmd := exec.Command(bin, dir, "-f", "-o", "rdr="+rootURL)
	cmd.Env = append(os.Environ(), "XRD_REQUESTTIMEOUT=30", "XRD_CONNECTIONRETRY=1")
	return StartFuseMount(ctx, "xrootdfs", cmd, dir)
}

// RcloneOptions are the rclone mount settings a caller may change.
type RcloneOptions struct {
	// CacheDir is rclone's VFS cache; with it the mount caches whole
	// files on disk (--vfs-cache-mode full), as a caching mount should.
	// Empty: no file cache (--vfs-cache-mode off).
	CacheDir string
}

// StartRcloneWebDAV mounts the WebDAV collection davURL
// (https://host:port/path) on dir with rclone mount, trusting any server
// certificate (the test servers' are self-signed). It reads no rclone
// config file of the user's.
func StartRcloneWebDAV(ctx context.Context, davURL, dir string, o RcloneOptions) (*FuseMount, error) {
	bin, err := exec.LookPath("rclone")
	if err != nil {
		return nil, fmt.Errorf("rclone not installed: %w", err)
	}
	args := []string{"mount", ":webdav:", dir, "--webdav-url", davURL, "--no-check-certificate", "--config", os.DevNull}
	if o.CacheDir != "" {
		args = append(args, "--vfs-cache-mode", "full", "--cache-dir", o.CacheDir)
	} else {
		args = append(args, "--vfs-cache-mode", "off")
	}
	return StartFuseMount(ctx, "rclone", exec.Command(bin, args...), dir)
}
