// Package local runs jobs on the box's own cores: as unprivileged slot
// users, each under a supervisor (`sitebox job-exec`) that outlives a
// restart of the box, in sandboxes the slot user owns only while its job
// runs, with whatever the slot user left behind reaped (`sitebox job-reap`):
// its processes, and its files in the machine's shared places.
package local

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sitebox/internal/jobs/spec"
)

// Exec starts and stops job supervisors on the box's own cores.
type Exec struct {
	self  string // the sitebox binary: `self job-exec SANDBOX` is the supervisor
	cg    *cgroupV2
	log   *slog.Logger
	grace time.Duration
}

// NewExec makes the launcher of local jobs: self is the sitebox binary
// (`self job-exec SANDBOX` is the supervisor), grace how long a stopped
// job has between SIGTERM and SIGKILL. Jobs get cgroup v2 limits where
// the box may make cgroups, rlimits and an RSS watch elsewhere.
func NewExec(self string, log *slog.Logger, grace time.Duration) *Exec {
	x := &Exec{self: self, log: log, grace: grace}
	if cg, err := detectCgroupV2("/sys/fs/cgroup"); err == nil {
		x.cg = cg
		log.Info("local jobs get cgroup v2 limits", "parent", cg.parent)
	} else {
		log.Info("local jobs get rlimits and an RSS watch (no usable cgroup v2)", "why", err)
	}
	return x
}

// Running is a started job: its supervisor, and Done closed when it is
// gone (its exit report, if any, is then in the sandbox).
type Running struct {
	PID     int
	Started int64 // the supervisor's start time, which tells a reused pid
	Done    chan struct{}
	// Adopted: found again after a restart, not our child; AwaitGone
	// closes Done.
	Adopted bool
}

// Start launches the supervisor of job id (sp run in sandbox) in a
// session of its own (so it outlives a restart of the box and its
// process group can be signalled as one), the sandbox given to the job's
// slot user.
func (x *Exec) Start(id, sandbox string, sp spec.Spec, sl Slot, attempt int) (*Running, error) {
	plan := execPlan{Attempt: attempt,
		Executable: sp.Executable, Arguments: sp.Arguments, Env: sp.Env,
		Stdout: sp.Stdout, Stderr: sp.Stderr,
		MemoryMB: sp.MemoryMB, DiskMB: sp.DiskMB, WallTime: sp.WallTime,
		Slot: sl,
	}
	if sp.Backfill {
		plan.Nice = 19
	}
	if sp.Container != "" {
		plan.Container, plan.Runtime = sp.Container, ContainerRuntime()
		if plan.Runtime == "" {
			return nil, fmt.Errorf("job %s: container image %s: no container runtime (apptainer) on the box", id, sp.Container)
		}
	}
	if x.cg != nil {
		dir, err := x.cg.create(id, sp.CPUs, sp.MemoryMB, sp.Backfill)
		if err != nil {
			x.log.Warn("cgroup not made; limits by rlimits", "job", id, "err", err)
		} else {
			plan.Cgroup = dir
		}
	}
	os.Remove(controlFile(sandbox, exitFile))
	if err := writeJSONAtomic(controlFile(sandbox, execFile), plan); err != nil {
		return nil, fmt.Errorf("job %s: plan: %w", id, err)
	}
	// The directories of output and error (e.g. logs/x.out), as
	// condor_submit's users expect; made while the sandbox is still the
	// box's, then given to the slot with the rest.
	for _, name := range []string{sp.Stdout, sp.Stderr} {
		if d := filepath.Dir(filepath.Clean(name)); name != "" && d != "." && !strings.HasPrefix(d, "..") && !filepath.IsAbs(d) {
			if err := os.MkdirAll(filepath.Join(sandbox, d), 0o755); err != nil {
				return nil, fmt.Errorf("job %s: directory of %s: %w", id, name, err)
			}
		}
	}
	if err := sl.ClaimSandbox(sandbox); err != nil {
		return nil, fmt.Errorf("job %s: %w", id, err)
	}
	cmd := exec.Command(x.self, "job-exec", sandbox)
	cmd.Dir = sandbox
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("job %s: start supervisor: %w", id, err)
	}
	r := &Running{PID: cmd.Process.Pid, Done: make(chan struct{})}
	r.Started, _ = procStart(r.PID)
	go func() {
		cmd.Wait()
		close(r.Done)
	}()
	return r, nil
}

// Reattach finds the supervisor of a job that was running when the box
// stopped: the same pid with the same start time. Nil when it is gone.
func (x *Exec) Reattach(pid int, started int64) *Running {
	if pid <= 0 {
		return nil
	}
	if st, ok := procStart(pid); !ok || st != started {
		return nil
	}
	return &Running{PID: pid, Started: started, Done: make(chan struct{}), Adopted: true}
}

// FindSupervisor looks for the supervisor of sandbox among the running
// processes, by its command line (`sitebox job-exec SANDBOX`): after a
// crash between a supervisor's start and the record of its pid, this is
// how the box knows the job runs. Nil when none does.
func (x *Exec) FindSupervisor(sandbox string) *Running {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid := atoiOr(e.Name(), -1)
		if pid <= 0 {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) == 3 && args[1] == "job-exec" && args[2] == sandbox {
			if st, ok := procStart(pid); ok {
				return &Running{PID: pid, Started: st, Done: make(chan struct{}), Adopted: true}
			}
		}
	}
	return nil
}

// AwaitGone closes an adopted job's done once its supervisor has gone:
// not our child any more, it can only be polled. It stops with ctx.
func (x *Exec) AwaitGone(ctx context.Context, r *Running) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if st, ok := procStart(r.PID); !ok || st != r.Started {
			close(r.Done)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop asks the job to end (SIGTERM to its process group), then kills it
// after grace unless it ended by itself. It returns at once.
func (x *Exec) Stop(r *Running, grace time.Duration) {
	syscall.Kill(-r.PID, syscall.SIGTERM)
	go func() {
		select {
		case <-r.Done:
		case <-time.After(grace):
			x.log.Info("job did not stop within its grace period; killing it", "pid", r.PID, "grace", grace)
			// The supervisor ignores TERM; kill the job's processes, then
			// the supervisor if it still lingers.
			killGroupMembers(r.PID, syscall.SIGKILL)
			select {
			case <-r.Done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-r.PID, syscall.SIGKILL)
			}
		}
	}()
}

// Release kills whatever the job's slot user still runs and removes what
// it left in the machine's shared places (the supervisor does so too,
// but it may itself have been killed), and gives the sandbox back to the
// box (none: "", a slot cleaned up with no job of its own): only when it
// succeeds may another job have the slot.
func (x *Exec) Release(sandbox string, sl Slot) error {
	err := reapSlot(sl, false)
	if sandbox == "" {
		return err
	}
	if rerr := sl.ReclaimSandbox(sandbox); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// Finish reads how the job ended once its supervisor is gone; a missing
// report means the supervisor itself died.
func (x *Exec) Finish(id, sandbox string) (*ExitReport, error) {
	if x.cg != nil {
		x.cg.remove(id)
	}
	rep, err := ReadExit(sandbox)
	if errors.Is(err, errNoExit) {
		return nil, errors.New("the job's supervisor ended without a report (killed, or the machine went down)")
	}
	return rep, err
}
