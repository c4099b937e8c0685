package peers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// XrootdConfig describes a real XRootD data server.
type XrootdConfig struct {
	DataDir string   // exported as "/" (oss.localroot)
	Port    int      // root:// port on 127.0.0.1
	Name    string   // instance name (-n), keeps logs and admin paths apart
	WorkDir string   // for config, logs and admin files
	Extra   []string // further config lines (e.g. XrdHttp, pfc.*)
	Env     []string // further environment (X509_CERT_DIR, X509_VOMS_DIR for gsi's VOMS plugin)
}

// StartXrootd runs xrootd as user xrootd (it refuses root) in the
// foreground so this process owns and reaps it.
func StartXrootd(ctx context.Context, c XrootdConfig) (*Process, error) {
	bin, err := exec.LookPath("xrootd")
	if err != nil {
		return nil, fmt.Errorf("xrootd not installed (Debian package xrootd-server): %w", err)
	}
	if c.Name == "" {
		c.Name = "sitebox-peer"
	}
	if err := os.MkdirAll(c.WorkDir, 0o755); err != nil {
		return nil, err
	}
	admin, logDir := filepath.Join(c.WorkDir, "admin"), filepath.Join(c.WorkDir, "log")
	for _, d := range []string{admin, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	cfgText := strings.Join(append([]string{
		"xrd.port " + strconv.Itoa(c.Port),
		"all.export /",
		"oss.localroot " + c.DataDir,
		"all.adminpath " + admin,
		"xrd.network nodnr",
	}, c.Extra...), "\n") + "\n"
	cfgFile := filepath.Join(c.WorkDir, "xrootd.cfg")
	if err := os.WriteFile(cfgFile, []byte(cfgText), 0o644); err != nil {
		return nil, err
	}
	if err := chownTree("xrootd", c.WorkDir, c.DataDir); err != nil {
		return nil, err
	}
	logFile := filepath.Join(logDir, "xrootd.log")
	cmd := exec.Command(bin, daemonArgs(c.Name, cfgFile, logFile)...)
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	return start(ctx, "xrootd", cmd, []int{c.Port}, filepath.Join(logDir, c.Name, "xrootd.log"))
}

// daemonArgs are the command-line arguments every xrootd and cmsd the
// tests start is given: run as the xrootd user, with its own name,
// config and log file.
//
// "-k fifo" rotates the log only when its fifo is written to. Without
// it the daemon's log thread computes the next midnight with mktime,
// which reads TZ from the environment while the main thread is still
// adding its XRD* variables with setenv; with glibc 2.36 the two race
// and about one start in 70 on a loaded machine dies of SIGSEGV in
// getenv before it listens (seen in cores: XrdSysTimer::Wait4Midnight
// against XrdConfig::Configure). With the fifo no start in 1,500 did.
func daemonArgs(name, cfgFile, logFile string) []string {
	return []string{"-R", "xrootd", "-n", name, "-c", cfgFile, "-k", "fifo", "-l", logFile}
}

// chownTree gives dirs (recursively) to the named user, and makes their
// parents traversable, so a daemon that drops root can use them.
func chownTree(name string, dirs ...string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %s missing (installed with xrootd-server): %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, d := range dirs {
		err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		})
		if err != nil {
			return err
		}
		for p := filepath.Dir(d); p != "/" && p != "."; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(p, fi.Mode().Perm()|0o011)
			}
		}
	}
	return nil
}
