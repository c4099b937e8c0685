package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// localExec starts and stops job supervisors on the box's own cores.
type localExec struct {
	self  string // the sitebox binary: `self job-exec SANDBOX` is the supervisor
	cg    *cgroupV2
	log   *slog.Logger
	grace time.Duration
}

// running is a started job: its supervisor, and done closed when it is
// gone (its exit report, if any, is then in the sandbox).
type running struct {
	pid   int
	start int64
	done  chan struct{}
	// adopted: found again after a restart, not our child; awaitGone
	// closes done.
	adopted bool
}

// start launches j's supervisor in a session of its own (so it outlives a
// restart of the box and its process group can be signalled as one),
// the sandbox given to the job's slot user.
func (x *localExec) start(j *Job, sl Slot) (*running, error) {
	plan := execPlan{
		Executable: j.Spec.Executable, Arguments: j.Spec.Arguments, Env: j.Spec.Env,
		Stdout: j.Spec.Stdout, Stderr: j.Spec.Stderr,
		MemoryMB: j.Spec.MemoryMB, DiskMB: j.Spec.DiskMB, WallTime: j.Spec.WallTime,
		Slot: sl,
	}
	if j.Spec.Backfill {
		plan.Nice = 19
	}
	if x.cg != nil {
		dir, err := x.cg.create(j.ID, j.Spec.CPUs, j.Spec.MemoryMB, j.Spec.Backfill)
		if err != nil {
			x.log.Warn("cgroup not made; limits by rlimits", "job", j.ID, "err", err)
		} else {
			plan.Cgroup = dir
		}
	}
	os.Remove(controlFile(j.SandboxDir, exitFile))
	if err := writeJSONAtomic(controlFile(j.SandboxDir, execFile), plan); err != nil {
		return nil, fmt.Errorf("job %s: plan: %w", j.ID, err)
	}
	if err := sl.ClaimSandbox(j.SandboxDir); err != nil {
		return nil, fmt.Errorf("job %s: %w", j.ID, err)
	}
	cmd := exec.Command(x.self, "job-exec", j.SandboxDir)
	cmd.Dir = j.SandboxDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("job %s: start supervisor: %w", j.ID, err)
	}
	r := &running{pid: cmd.Process.Pid, done: make(chan struct{})}
	r.start, _ = procStart(r.pid)
	go func() {
		cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

// reattach finds the supervisor of a job that was running when the box
// stopped: the same pid with the same start time. Nil when it is gone.
func (x *localExec) reattach(j *Job) *running {
	if j.Pid <= 0 {
		return nil
	}
	if st, ok := procStart(j.Pid); !ok || st != j.PidStart {
		return nil
	}
	return &running{pid: j.Pid, start: j.PidStart, done: make(chan struct{}), adopted: true}
}

// awaitGone closes an adopted job's done once its supervisor has gone:
// not our child any more, it can only be polled. It stops with ctx.
func (x *localExec) awaitGone(ctx context.Context, r *running) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if st, ok := procStart(r.pid); !ok || st != r.start {
			close(r.done)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stop asks the job to end (SIGTERM to its process group), then kills it
// after grace unless it ended by itself. It returns at once.
func (x *localExec) stop(r *running, grace time.Duration) {
	syscall.Kill(-r.pid, syscall.SIGTERM)
	go func() {
		select {
		case <-r.done:
		case <-time.After(grace):
			x.log.Info("job did not stop within its grace period; killing it", "pid", r.pid, "grace", grace)
			// The supervisor ignores TERM; kill the job's processes, then
			// the supervisor if it still lingers.
			killGroupMembers(r.pid, syscall.SIGKILL)
			select {
			case <-r.done:
			case <-time.After(5 * time.Second):
				syscall.Kill(-r.pid, syscall.SIGKILL)
			}
		}
	}()
}

// release kills whatever the job's slot user still runs (the supervisor
// does so too, but it may itself have been killed) and gives the sandbox
// back to the box: only then may another job have the slot.
func (x *localExec) release(j *Job, sl Slot) error {
	err := reapSlot(sl, false)
	if rerr := sl.ReclaimSandbox(j.SandboxDir); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	return err
}

// finish reads how the job ended once its supervisor is gone; a missing
// report means the supervisor itself died.
func (x *localExec) finish(j *Job) (*exitReport, error) {
	if x.cg != nil {
		x.cg.remove(j.ID)
	}
	rep, err := readExit(j.SandboxDir)
	if errors.Is(err, errNoExit) {
		return nil, errors.New("the job's supervisor ended without a report (killed, or the machine went down)")
	}
	return rep, err
}
