package peers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ClusterConfig describes a real XRootD cluster on 127.0.0.1: a manager
// (redirector: xrootd + cmsd, all.role manager) and one data server
// (xrootd + cmsd, all.role server) subscribed to it.
type ClusterConfig struct {
	DataDir     string // the data server's files, exported as "/" (oss.localroot)
	WorkDir     string // config, logs and admin paths of all four daemons
	ManagerPort int    // root:// port of the manager's xrootd
	CmsPort     int    // the manager cmsd's port (all.manager)
	DataPort    int    // root:// port of the data server's xrootd
	// LoginTimeout bounds the wait for the data server to log in to the
	// manager (default 60 s).
	LoginTimeout time.Duration
	Extra        []string // further lines for the shared config file
}

// Cluster is a running manager and data server.
type Cluster struct {
	Manager, ManagerCmsd *Process // the redirector
	Server, ServerCmsd   *Process // the data server
	// ManagerAddr and ServerAddr are the root:// host:port of each.
	ManagerAddr, ServerAddr string
}

// Instance names (-n): they select the config branch and keep logs and
// admin paths of the two xrootd+cmsd pairs apart.
const (
	clusterManager = "redir"
	clusterServer  = "ds1"
)

// StartCluster starts the manager, then the data server, and returns once
// the data server has logged in to the manager: before that the manager
// can only answer "wait" or "no servers". Each cmsd starts before its
// xrootd, since an xrootd that finds no cmsd retries only every 10 s.
func StartCluster(ctx context.Context, c ClusterConfig) (cl *Cluster, err error) {
	cfgFile, admin, logDir, err := prepareCluster(&c)
	if err != nil {
		return nil, err
	}

	cl = &Cluster{
		ManagerAddr: "127.0.0.1:" + strconv.Itoa(c.ManagerPort),
		ServerAddr:  "127.0.0.1:" + strconv.Itoa(c.DataPort),
	}
	defer func() {
		if err != nil {
			cl.Stop()
			cl = nil
		}
	}()
	daemon := func(bin, name string, ports []int) (*Process, error) {
		cmd := exec.Command(bin, daemonArgs(name, cfgFile, filepath.Join(logDir, bin+".log"))...)
		p, err := start(ctx, bin+" "+name, cmd, ports, filepath.Join(logDir, name, bin+".log"))
		if err != nil {
			return nil, fmt.Errorf("start %s %s: %w", name, bin, err)
		}
		return p, nil
	}
	if cl.ManagerCmsd, err = daemon("cmsd", clusterManager, []int{c.CmsPort}); err != nil {
		return cl, err
	}
	if cl.Manager, err = daemon("xrootd", clusterManager, []int{c.ManagerPort}); err != nil {
		return cl, err
	}
	// The data server's cmsd listens on no fixed port: it is ready for its
	// xrootd once its admin socket exists.
	if cl.ServerCmsd, err = daemon("cmsd", clusterServer, nil); err != nil {
		return cl, err
	}
	sock := filepath.Join(admin, clusterServer, ".olb", "olbd.admin")
	if err := waitFor(ctx, 20*time.Second, func() bool { _, err := os.Stat(sock); return err == nil }); err != nil {
		return cl, fmt.Errorf("data server cmsd made no admin socket %s: %w: %s", sock, err, cl.ServerCmsd.tail(filepath.Join(logDir, clusterServer, "cmsd.log")))
	}
	// xrootd 5.5.3 now and then dies of a segmentation fault while
	// starting next to a fresh cmsd; a second start works.
	for try := 1; ; try++ {
		if cl.Server, err = daemon("xrootd", clusterServer, []int{c.DataPort}); err == nil {
			break
		}
		if try == 3 || ctx.Err() != nil {
			return cl, err
		}
	}

	// The manager's cmsd logs "Primary server.PID:FD@host:PORT logged in."
	// when the data server has subscribed (the cmsd pair logs in once its
	// xrootd has reached it).
	managerLog := filepath.Join(logDir, clusterManager, "cmsd.log")
	mark := ":" + strconv.Itoa(c.DataPort) + " logged in"
	loggedIn := func() bool {
		b, err := os.ReadFile(managerLog)
		return err == nil && strings.Contains(string(b), mark)
	}
	if err := waitFor(ctx, c.LoginTimeout, loggedIn); err != nil {
		return cl, fmt.Errorf("data server %s did not log in to the manager cmsd within %v (%w): %s",
			cl.ServerAddr, c.LoginTimeout, err, cl.ManagerCmsd.tail(managerLog))
	}
	return cl, nil
}

// prepareCluster checks the tools and ports, fills defaults and writes
// the config file and directories the four daemons share.
func prepareCluster(c *ClusterConfig) (cfgFile, admin, logDir string, err error) {
	for _, tool := range []string{"xrootd", "cmsd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", "", "", fmt.Errorf("%s not installed (Debian package xrootd-server): %w", tool, err)
		}
	}
	if c.ManagerPort == 0 || c.CmsPort == 0 || c.DataPort == 0 {
		return "", "", "", fmt.Errorf("cluster: manager, cmsd and data server ports must all be set")
	}
	if c.LoginTimeout <= 0 {
		c.LoginTimeout = 60 * time.Second
	}
	admin, logDir = filepath.Join(c.WorkDir, "admin"), filepath.Join(c.WorkDir, "log")
	for _, d := range []string{admin, logDir, c.DataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", "", err
		}
	}
	cfgFile = filepath.Join(c.WorkDir, "cluster.cfg")
	if err := os.WriteFile(cfgFile, []byte(clusterConfigText(*c, admin)), 0o644); err != nil {
		return "", "", "", err
	}
	if err := chownTree("xrootd", c.WorkDir, c.DataDir); err != nil {
		return "", "", "", err
	}
	return cfgFile, admin, logDir, nil
}

// clusterConfigText is the one config file all four daemons read; the
// instance name picks the branch.
func clusterConfigText(c ClusterConfig, admin string) string {
	lines := []string{
		"all.export /",
		"all.adminpath " + admin,
		"all.manager 127.0.0.1:" + strconv.Itoa(c.CmsPort),
		"xrd.network nodnr",
		// Without this the manager answers kXR_wait for 90 s after start,
		// waiting for servers that might still subscribe.
		"cms.delay startup 2",
	}
	lines = append(lines, c.Extra...)
	lines = append(lines,
		"if named "+clusterManager,
		"   all.role manager",
		"   xrd.port "+strconv.Itoa(c.ManagerPort)+" if exec xrootd",
		"   xrd.port "+strconv.Itoa(c.CmsPort)+" if exec cmsd",
		"else",
		"   all.role server",
		"   xrd.port "+strconv.Itoa(c.DataPort)+" if exec xrootd",
		"   oss.localroot "+c.DataDir,
		"fi",
	)
	return strings.Join(lines, "\n") + "\n"
}

// waitFor polls ok every 100 ms until it holds, ctx ends or d passes.
func waitFor(ctx context.Context, d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// ManagerPeakRSS is the peak resident memory of the manager's xrootd and
// cmsd together: the redirector is both.
func (cl *Cluster) ManagerPeakRSS() (int64, error) {
	var sum int64
	for _, p := range []*Process{cl.Manager, cl.ManagerCmsd} {
		n, err := p.PeakRSS()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p.Name, err)
		}
		sum += n
	}
	return sum, nil
}

// Stop stops all four daemons, the data server first so the manager does
// not log it as lost while going down. Safe on a partly started cluster.
func (cl *Cluster) Stop() {
	if cl == nil {
		return
	}
	for _, p := range []*Process{cl.Server, cl.ServerCmsd, cl.Manager, cl.ManagerCmsd} {
		if p != nil {
			p.Stop()
		}
	}
}
