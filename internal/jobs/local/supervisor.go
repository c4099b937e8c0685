package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The box does not run a job itself: it starts a small supervisor (the
// hidden `sitebox job-exec SANDBOX` command, RunSupervisor) in a session
// of its own. The supervisor applies the limits, runs the job as its
// child — as the job's slot user, with no capabilities — watches its
// memory, kills whatever the slot user still runs when the job ends, and
// writes how it ended to the control directory, beside the sandbox and
// out of the job's reach. A box that restarts finds running jobs by
// their supervisor and their fate in that file: re-attached, or lost —
// never forgotten.

// execFile and exitFile live in the control directory (controlFile).
const (
	execFile = ".exec.json"
	exitFile = ".exit.json"
)

// execPlan is what the supervisor runs, written by the box.
type execPlan struct {
	Executable string            `json:"executable"`
	Arguments  []string          `json:"arguments"`
	Env        map[string]string `json:"env"`
	Stdout     string            `json:"stdout"`
	Stderr     string            `json:"stderr"`
	MemoryMB   int64             `json:"memory_mb"`
	DiskMB     int64             `json:"disk_mb"`
	WallTime   time.Duration     `json:"wall_time"`
	Nice       int               `json:"nice"`
	// Container is the image a container job runs in, with Runtime
	// (apptainer), found when the box started.
	Container string `json:"container,omitempty"`
	Runtime   string `json:"runtime,omitempty"`
	// Cgroup is the cgroup v2 directory to join, when the box made one.
	Cgroup string `json:"cgroup,omitempty"`
	// Slot is the unprivileged account the job runs as.
	Slot Slot `json:"slot"`
	// Attempt is the box's count of the job's starts, copied into the
	// exit report so a report left by an earlier attempt (preempted,
	// requeued) is never taken for this one's.
	Attempt int `json:"attempt,omitempty"`
}

// ExitReport is how the job ended, written by the supervisor.
type ExitReport struct {
	ExitCode int       `json:"exit_code"`
	Signal   string    `json:"signal,omitempty"`
	Reason   string    `json:"reason,omitempty"` // a limit that was enforced
	CPU      float64   `json:"cpu_seconds"`      // user + system of the job and its waited-for children
	Wall     float64   `json:"wall_seconds"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Attempt  int       `json:"attempt,omitempty"` // the plan's
}

// watchEvery is how often the supervisor checks memory, disk and time.
const watchEvery = 2 * time.Second

// RunSupervisor is the job supervisor's main: it runs the plan in
// sandbox and returns the job's exit code (128+signal when killed).
func RunSupervisor(sandbox string) int {
	plan, err := readPlan(sandbox)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sitebox job-exec:", err)
		return 127
	}
	rep := supervise(sandbox, plan)
	if err := writeJSONAtomic(controlFile(sandbox, exitFile), rep); err != nil {
		fmt.Fprintln(os.Stderr, "sitebox job-exec:", err)
	}
	return rep.ExitCode
}

func readPlan(sandbox string) (*execPlan, error) {
	b, err := os.ReadFile(controlFile(sandbox, execFile))
	if err != nil {
		return nil, err
	}
	p := &execPlan{}
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("%s: %w", execFile, err)
	}
	return p, nil
}

func supervise(sandbox string, p *execPlan) ExitReport {
	rep := ExitReport{Started: time.Now(), Attempt: p.Attempt}
	fail := func(code int, format string, args ...any) ExitReport {
		rep.ExitCode, rep.Reason, rep.Finished = code, fmt.Sprintf(format, args...), time.Now()
		return rep
	}
	if p.Slot.UID == 0 || p.Slot.GID == 0 {
		return fail(127, "no slot user in the plan: jobs never run as the box's user")
	}
	// Orphans of the job (double forks, setsid) become the supervisor's
	// children, not init's: the supervisor collects them when it reaps.
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	if p.Cgroup != "" {
		if err := os.WriteFile(filepath.Join(p.Cgroup, "cgroup.procs"), []byte("0"), 0); err != nil {
			return fail(127, "cannot join cgroup %s: %v", p.Cgroup, err)
		}
	}
	applyLimits(p)
	out, err := OpenInSandbox(sandbox, p.Stdout, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fail(127, "stdout: %v", err)
	}
	defer out.Close()
	errf, err := OpenInSandbox(sandbox, p.Stderr, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fail(127, "stderr: %v", err)
	}
	defer errf.Close()
	cmd := jobCommand(sandbox, p, out, errf)
	// TERM reaches the job from the box's kill of the whole group; the
	// supervisor stays to write the report. Caught, not ignored: an
	// ignored signal stays ignored across exec, and a shell job could not
	// even trap it then.
	signal.Notify(make(chan os.Signal, 4), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// The job is forked from this thread and inherits its credentials:
	// no ambient or inheritable capabilities and no_new_privs leave it
	// with none once it runs as the slot user.
	runtime.LockOSThread()
	if err := dropThreadCaps(false); err != nil {
		fmt.Fprintf(errf, "sitebox: cannot drop capabilities: %v\n", err)
		return fail(127, "cannot drop capabilities: %v", err)
	}
	if err := setThreadNice(p.Nice); err != nil {
		return fail(127, "cannot set nice %d: %v", p.Nice, err)
	}
	// The job's files are its owner's alone unless it says otherwise: with
	// the box's umask (often 022; the packaged unit sets 077) what it
	// writes in /tmp while it runs would be readable by the jobs of other
	// owners running beside it as other slot users. Set after the supervisor has opened the job's stdout and
	// stderr, which the job may read by name; the supervisor writes only
	// its exit report after this, into the box's own control directory.
	unix.Umask(0o077)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(errf, "sitebox: cannot start %s: %v\n", p.Executable, err)
		return fail(127, "cannot start %s: %v", p.Executable, err)
	}
	limitHit := watchJob(cmd, sandbox, p, rep.Started, errf)
	// Whatever the job left running as its slot user dies with it.
	if err := reapSlot(p.Slot, true); err != nil {
		fmt.Fprintf(errf, "sitebox: %v\n", err)
	}
	rep.Finished = time.Now()
	rep.Wall = rep.Finished.Sub(rep.Started).Seconds()
	if st := cmd.ProcessState; st != nil {
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			rep.CPU = tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
		}
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			rep.Signal = ws.Signal().String()
			rep.ExitCode = 128 + int(ws.Signal())
		} else {
			rep.ExitCode = st.ExitCode()
		}
	}
	rep.Reason = limitHit
	return rep
}

// jobCommand is the job's command: its executable (a bare name shipped
// with the job is found in the sandbox), in the sandbox, as the slot
// user with no supplementary groups, with a clean environment.
func jobCommand(sandbox string, p *execPlan, out, errf *os.File) *exec.Cmd {
	exe := p.Executable
	if !filepath.IsAbs(exe) && filepath.Base(exe) == exe {
		if local := filepath.Join(sandbox, exe); fileExists(local) {
			exe = local // shipped with the job
		}
	} else if !filepath.IsAbs(exe) {
		exe = filepath.Join(sandbox, exe)
	}
	name, args := exe, p.Arguments
	if p.Container != "" {
		name, args = containerArgs(p.Runtime, p.Container, sandbox, exe, p.Arguments)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = sandbox
	cmd.Stdout, cmd.Stderr = out, errf
	cmd.Env = jobEnv(sandbox, p.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// The slot user's uid and gid, no supplementary groups.
		Credential: &syscall.Credential{Uid: p.Slot.UID, Gid: p.Slot.GID, Groups: []uint32{}},
	}
	return cmd
}

// watchJob waits for the started job, checking its limits, and says
// which one it broke ("" for none); a job over a limit is killed, all
// its processes.
func watchJob(cmd *exec.Cmd, sandbox string, p *execPlan, started time.Time, errf *os.File) string {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	var limitHit string
loop:
	for {
		select {
		case <-done:
			break loop
		case <-t.C:
			if limitHit == "" {
				if limitHit = overLimit(sandbox, p, started); limitHit != "" {
					fmt.Fprintf(errf, "sitebox: killing the job: %s\n", limitHit)
					eachProcOfUID(p.Slot.UID, 0, func(pid int) { syscall.Kill(pid, syscall.SIGKILL) })
				}
			}
		}
	}
	return limitHit
}

// jobEnv is a clean environment: the job's own variables and the basics
// a batch job expects, not the box's.
func jobEnv(sandbox string, env map[string]string) []string {
	out := []string{"HOME=" + sandbox, "TMPDIR=" + sandbox, "PWD=" + sandbox,
		"PATH=/usr/local/bin:/usr/bin:/bin", "_CONDOR_SCRATCH_DIR=" + sandbox}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func tvSeconds(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// applyLimits sets what the job inherits: rlimits (address space as a
// backstop for memory where no cgroup does it, file size for disk) and
// the nice level (backfill runs at 19) is set by setThreadNice.
func applyLimits(p *execPlan) {
	if p.MemoryMB > 0 && p.Cgroup == "" {
		// Address space, not RSS: runtimes reserve far more than they
		// use, so only a generous multiple stops runaways without
		// breaking honest jobs; the RSS watch enforces the request.
		as := uint64(max(4*p.MemoryMB, p.MemoryMB+4096)) << 20
		unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as})
	}
	if p.DiskMB > 0 {
		fs := uint64(p.DiskMB) << 20
		unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: fs, Max: fs})
	}
}

// setThreadNice sets the calling thread's nice level, which is what a
// process forked from it inherits: on Linux setpriority(PRIO_PROCESS, 0)
// changes one thread, so it must be the locked thread the job is forked
// from, not whichever thread the runtime happened to use.
func setThreadNice(nice int) error {
	if nice == 0 {
		return nil
	}
	return unix.Setpriority(unix.PRIO_PROCESS, 0, nice)
}

// overLimit says which limit the job broke, or "".
func overLimit(sandbox string, p *execPlan, started time.Time) string {
	if p.WallTime > 0 && time.Since(started) > p.WallTime {
		return fmt.Sprintf("wall time %v over the %v requested", time.Since(started).Round(time.Second), p.WallTime)
	}
	if p.MemoryMB > 0 && p.Cgroup == "" {
		if rss := slotRSS(p.Slot.UID); rss > p.MemoryMB<<20 {
			return fmt.Sprintf("memory %d MiB over the %d MiB requested", rss>>20, p.MemoryMB)
		}
	}
	if p.DiskMB > 0 {
		if n := dirSize(sandbox); n > p.DiskMB<<20 {
			return fmt.Sprintf("sandbox %d MiB over the %d MiB of disk requested", n>>20, p.DiskMB)
		}
	}
	return ""
}

// slotRSS sums the resident memory of the slot user's processes: all
// the job's, wherever they moved.
func slotRSS(uid uint32) int64 {
	var sum int64
	eachProcOfUID(uid, 0, func(pid int) {
		if _, rss, ok := procGroupRSS(pid); ok {
			sum += rss
		}
	})
	return sum
}

// killGroupMembers signals every process of group pgid but its leader
// (the supervisor, which must live to write the report).
func killGroupMembers(pgid int, sig syscall.Signal) {
	eachGroupMember(pgid, func(pid int, _ int64) { syscall.Kill(pid, sig) })
}

func eachGroupMember(pgid int, fn func(pid int, rss int64)) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid := atoiOr(e.Name(), -1)
		if pid <= 0 || pid == pgid {
			continue
		}
		if g, rss, ok := procGroupRSS(pid); ok && g == pgid {
			fn(pid, rss)
		}
	}
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func writeJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

var errNoExit = errors.New("no exit report")

// RemoveControl removes the plan and exit report of sandbox, with the
// sandbox itself gone.
func RemoveControl(sandbox string) {
	os.Remove(controlFile(sandbox, execFile))
	os.Remove(controlFile(sandbox, exitFile))
}

func ReadExit(sandbox string) (*ExitReport, error) {
	b, err := os.ReadFile(controlFile(sandbox, exitFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoExit
	}
	if err != nil {
		return nil, err
	}
	r := &ExitReport{}
	return r, json.Unmarshal(b, r)
}
