package peers

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SlurmConfig describes a private one-node Slurm on this machine, for
// tests and benchmarks of the Slurm job backend.
type SlurmConfig struct {
	// WorkDir holds everything of the instance: slurm.conf, controller
	// state, slurmd spool, pid files, logs, the job completion file and
	// munge's key and socket. Required.
	WorkDir string
	// CPUs and MemoryMB are the node's size (defaults 2 and 4096). They
	// may exceed the machine's: slurmd reports the configured values
	// (SlurmdParameters=config_overrides), so tests can fill a node.
	CPUs     int
	MemoryMB int
}

// SlurmPartition is the one (default) partition of a private Slurm.
const SlurmPartition = "sitebox"

// systemMungeSocket is where Debian's munged listens; StartSlurm falls
// back to it when its own munged cannot start.
const systemMungeSocket = "/run/munge/munge.socket.2"

// Slurm is a running private Slurm: munged, slurmctld and slurmd, all
// children of this process.
type Slurm struct {
	Munged    *Process // nil when the system's munged is used
	Slurmctld *Process
	Slurmd    *Process
	// Conf is the generated slurm.conf; commands find it through Env.
	Conf        string
	Node        string // the node's name (hostname -s, else localhost)
	Partition   string // SlurmPartition
	MungeSocket string
	// SlurmctldPort and SlurmdPort are the daemons' ports on 127.0.0.1.
	SlurmctldPort, SlurmdPort int
	logDir                    string
	stopOnce                  sync.Once
}

// slurmTools maps each program StartSlurm or its callers need to the
// Debian package that has it (slurm-wlm pulls in the daemons and the
// client commands).
var slurmTools = [][2]string{
	{"munged", "munge"}, {"slurmctld", "slurm-wlm"}, {"slurmd", "slurm-wlm"},
	{"sinfo", "slurm-wlm"}, {"sbatch", "slurm-wlm"}, {"squeue", "slurm-wlm"},
	{"sacct", "slurm-wlm"}, {"scancel", "slurm-wlm"},
}

// StartSlurm starts munged, slurmctld and slurmd in the foreground and
// returns once sinfo shows the node idle. All ports are free ones on
// 127.0.0.1 and every file lives under c.WorkDir, so it does not clash
// with a system Slurm or munge. It must run as root: slurmd starts jobs
// as their submitting user. On error everything started is stopped.
func StartSlurm(ctx context.Context, c SlurmConfig) (s *Slurm, err error) {
	var missing []string
	for _, t := range slurmTools {
		if _, err := exec.LookPath(t[0]); err != nil {
			missing = append(missing, t[0]+" (Debian package "+t[1]+")")
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("slurm: not installed: %s; run apt-get install -y slurm-wlm munge", strings.Join(missing, ", "))
	}
	if c.WorkDir == "" {
		return nil, errors.New("slurm: no WorkDir")
	}
	if c.CPUs <= 0 {
		c.CPUs = 2
	}
	if c.MemoryMB <= 0 {
		c.MemoryMB = 4096
	}
	work, err := filepath.Abs(c.WorkDir)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	s = &Slurm{Conf: filepath.Join(work, "slurm.conf"), Node: shortHostname(), Partition: SlurmPartition, logDir: filepath.Join(work, "log")}
	defer func() {
		if err != nil {
			s.Stop()
			s = nil
		}
	}()
	for _, d := range []string{"run", "state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return s, fmt.Errorf("slurm: %w", err)
		}
	}
	// munged insists that the directory of its socket, and every one
	// above it, can be entered by all (t.TempDir makes 0700 ones).
	if err := makeTraversable(filepath.Join(work, "run")); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	if err := s.startMunge(ctx, work); err != nil {
		return s, err
	}
	if s.SlurmctldPort, err = FreePort(); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	if s.SlurmdPort, err = FreePort(); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	if err := os.WriteFile(s.Conf, []byte(slurmConfText(c, s, work)), 0o644); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	ctld := exec.Command("slurmctld", "-D", "-f", s.Conf)
	ctld.Env = append(os.Environ(), s.Env()...)
	if s.Slurmctld, err = start(ctx, "slurmctld", ctld, []int{s.SlurmctldPort}, filepath.Join(s.logDir, "slurmctld.log")); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	// -N names the node explicitly, so slurmd does not depend on how
	// this machine's hostname resolves.
	sd := exec.Command("slurmd", "-D", "-f", s.Conf, "-N", s.Node)
	sd.Env = ctld.Env
	if s.Slurmd, err = start(ctx, "slurmd", sd, []int{s.SlurmdPort}, filepath.Join(s.logDir, "slurmd.log")); err != nil {
		return s, fmt.Errorf("slurm: %w", err)
	}
	if err := s.waitIdle(ctx, 60*time.Second); err != nil {
		return s, err
	}
	return s, nil
}

// startMunge runs a munged of our own, with a fresh key, so that neither
// a system munged nor another test's is needed; if that fails and the
// system's munged is up, Slurm uses that one instead.
func (s *Slurm) startMunge(ctx context.Context, work string) error {
	keyDir := filepath.Join(work, "munge") // munged wants it private
	if err := os.MkdirAll(keyDir, 0o700); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	key := filepath.Join(keyDir, "munge.key")
	if _, err := os.Stat(key); errors.Is(err, fs.ErrNotExist) {
		b := make([]byte, 128) // the size mungekey makes (1024 bits)
		rand.Read(b)
		if err := os.WriteFile(key, b, 0o600); err != nil {
			return fmt.Errorf("slurm: munge key: %w", err)
		}
	}
	s.MungeSocket = filepath.Join(work, "run", "munge.socket")
	var why error
	if len(s.MungeSocket) >= 108 { // sun_path
		why = fmt.Errorf("socket path %s too long for a unix socket", s.MungeSocket)
	} else {
		cmd := exec.Command("munged", "--foreground", "--force",
			"--socket="+s.MungeSocket, "--key-file="+key,
			"--pid-file="+filepath.Join(work, "run", "munged.pid"),
			"--seed-file="+filepath.Join(keyDir, "munged.seed"),
			"--log-file="+filepath.Join(s.logDir, "munged.log"))
		p, err := start(ctx, "munged", cmd, nil, "")
		if err == nil {
			s.Munged = p
			err = waitProcess(ctx, 10*time.Second, func() bool { _, err := os.Stat(s.MungeSocket); return err == nil }, p)
			if err == nil {
				return nil
			}
			err = fmt.Errorf("%w: %s", err, p.tail(""))
			p.Stop()
			s.Munged = nil
		}
		why = err
	}
	if _, err := os.Stat(systemMungeSocket); err == nil {
		s.MungeSocket = systemMungeSocket
		return nil
	}
	return fmt.Errorf("slurm: own munged failed (%v) and no system munged at %s", why, systemMungeSocket)
}

// slurmConfText is the instance's slurm.conf: one node, one partition,
// no slurmdbd. Finished jobs go to a jobcomp/filetxt file, which
// `sacct -c` reads (plain sacct says accounting storage is disabled).
func slurmConfText(c SlurmConfig, s *Slurm, work string) string {
	in := func(p ...string) string { return filepath.Join(append([]string{work}, p...)...) }
	return strings.Join([]string{
		"ClusterName=sitebox",
		// slurmctld accepts "localhost" as its own name whatever the
		// machine is called.
		"SlurmctldHost=localhost(127.0.0.1)",
		"SlurmctldPort=" + strconv.Itoa(s.SlurmctldPort),
		"SlurmdPort=" + strconv.Itoa(s.SlurmdPort),
		// Listen on the configured addresses (127.0.0.1), not on all.
		"CommunicationParameters=NoCtldInAddrAny,NoInAddrAny",
		"SlurmUser=root",
		"SlurmdUser=root",
		"AuthType=auth/munge",
		"CredType=cred/munge",
		"AuthInfo=socket=" + s.MungeSocket, // read by the commands too
		"ProctrackType=proctrack/linuxproc",
		"TaskPlugin=task/none",
		"MpiDefault=none",
		"JobAcctGatherType=jobacct_gather/linux",
		"AccountingStorageType=accounting_storage/none",
		"JobCompType=jobcomp/filetxt",
		"JobCompLoc=" + in("jobcomp.txt"),
		"SchedulerType=sched/backfill",
		"SelectType=select/cons_tres",
		"SelectTypeParameters=CR_Core_Memory",
		"SlurmdParameters=config_overrides",
		"ReturnToService=2",
		// A cancelled job gets SIGKILL 5 s after SIGTERM (default 30).
		"KillWait=5",
		"StateSaveLocation=" + in("state"),
		"SlurmdSpoolDir=" + in("spool"),
		"SlurmctldPidFile=" + in("run", "slurmctld.pid"),
		"SlurmdPidFile=" + in("run", "slurmd.pid"),
		"SlurmctldLogFile=" + in("log", "slurmctld.log"),
		"SlurmdLogFile=" + in("log", "slurmd.log"),
		fmt.Sprintf("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d State=UNKNOWN", s.Node, c.CPUs, c.MemoryMB),
		"PartitionName=" + s.Partition + " Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
	}, "\n") + "\n"
}

// Env is what Slurm commands (sbatch, squeue, sacct, scancel, sinfo)
// need in their environment to talk to this instance.
func (s *Slurm) Env() []string {
	return []string{"SLURM_CONF=" + s.Conf}
}

// Command returns a Slurm command set up for this instance.
func (s *Slurm) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), s.Env()...)
	return cmd
}

// waitIdle polls sinfo until the node is idle: before that sbatch works
// but jobs wait with reason "Nodes required for job are DOWN".
func (s *Slurm) waitIdle(ctx context.Context, d time.Duration) error {
	var last string
	idle := func() bool {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := s.Command(c, "sinfo", "-h", "-N", "-n", s.Node, "-o", "%t").CombinedOutput()
		last = strings.TrimSpace(string(out))
		return err == nil && last == "idle"
	}
	if err := waitProcess(ctx, d, idle, s.Slurmctld, s.Slurmd); err != nil {
		return fmt.Errorf("slurm: node %s not idle (sinfo: %q): %w; slurmctld: %s; slurmd: %s", s.Node, last, err,
			s.Slurmctld.tail(filepath.Join(s.logDir, "slurmctld.log")), s.Slurmd.tail(filepath.Join(s.logDir, "slurmd.log")))
	}
	return nil
}

// waitProcess is waitFor that gives up at once when one of ps exits.
func waitProcess(ctx context.Context, d time.Duration, ok func() bool, ps ...*Process) error {
	var dead *Process
	err := waitFor(ctx, d, func() bool {
		for _, p := range ps {
			select {
			case <-p.done:
				dead = p
				return true
			default:
			}
		}
		return ok()
	})
	if dead != nil {
		return fmt.Errorf("%s exited (%v)", dead.Name, dead.err)
	}
	return err
}

// Stop cancels the instance's jobs, then stops slurmd, slurmctld and
// munged. Safe after a partial start and to call twice.
//
// Jobs need care: slurmd starts each under a slurmstepd in a session of
// its own, re-parented to init, so stopping slurmd would leave them
// running. So Stop first cancels them through Slurm, and then kills by
// session whatever step of this instance is still there.
func (s *Slurm) Stop() {
	if s != nil {
		s.stopOnce.Do(s.stop)
	}
}

func (s *Slurm) stop() {
	if s.Slurmctld != nil && s.Slurmd != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if s.Command(ctx, "scancel", "--partition="+s.Partition).Run() == nil {
			// KillWait=5: SIGKILL follows SIGTERM after 5 s.
			waitFor(ctx, 15*time.Second, func() bool {
				out, err := s.Command(ctx, "squeue", "-h", "-o", "%i").Output()
				return err == nil && len(strings.TrimSpace(string(out))) == 0
			})
		}
		cancel()
	}
	for _, p := range []*Process{s.Slurmd, s.Slurmctld, s.Munged} {
		if p != nil {
			p.Stop()
		}
	}
	if s.logDir != "" {
		killSteps(filepath.Join(s.logDir, "slurmd.log"))
	}
}

// killSteps SIGKILLs the sessions of the slurmstepd processes that hold
// slurmdLog open, which ties them to one instance.
func killSteps(slurmdLog string) {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	sessions := map[int]bool{}
	for _, d := range procs {
		if comm, _ := os.ReadFile(d + "/comm"); strings.TrimSpace(string(comm)) != "slurmstepd" {
			continue
		}
		fds, _ := filepath.Glob(d + "/fd/*")
		for _, fd := range fds {
			if l, _ := os.Readlink(fd); strings.TrimSuffix(l, " (deleted)") == slurmdLog {
				if sid := sessionOf(d); sid > 1 {
					sessions[sid] = true
				}
				break
			}
		}
	}
	if len(sessions) == 0 {
		return
	}
	for _, d := range procs {
		if sessions[sessionOf(d)] {
			pid, _ := strconv.Atoi(filepath.Base(d))
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// sessionOf reads the session id from /proc/PID/stat (field 6, after the
// parenthesised command name, which may hold spaces).
func sessionOf(procDir string) int {
	f, err := procStat(procDir)
	if err != nil || len(f) < 4 {
		return 0
	}
	sid, _ := strconv.Atoi(f[3])
	return sid
}

// shortHostname is `hostname -s`, or localhost when there is none.
func shortHostname() string {
	h, err := os.Hostname()
	if h, _, _ = strings.Cut(h, "."); err != nil || h == "" {
		return "localhost"
	}
	return h
}

// makeTraversable adds search permission for all to dir and each of its
// parents that lacks it.
func makeTraversable(dir string) error {
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o011 != 0o011 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
				return err
			}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}
