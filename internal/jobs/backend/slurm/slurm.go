// Package slurm is the job router's backend for a Slurm cluster.
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/local"
)

// Config configures a Backend. The zero value works with
// the machine's own Slurm and its default partition.
type Config struct {
	Partition string   // sbatch --partition and the one jobs.Capacity counts ("": the cluster's default)
	Env       []string // added to the commands' environment, e.g. SLURM_CONF=…
	// RunAs is the unprivileged account the jobs run as (jobs never run
	// as the box's user): a box running as root submits with sbatch
	// --uid/--gid, any other box runs sbatch and scancel as that account
	// (which needs CAP_SETUID and CAP_SETGID). Its zero value submits as
	// the box's user, for tests with a fake Slurm only.
	RunAs local.Slot
	// Command runs one Slurm command (nil: exec with Env); tests put a
	// fake here.
	Command Command
	Timeout time.Duration // per command (default 30 s)
	Log     *slog.Logger  // nil: discard
}

// Command runs one Slurm command and returns its standard output. A
// command that ran and failed returns a *Error with its stderr.
type Command func(ctx context.Context, name string, args ...string) ([]byte, error)

// Error is a failed Slurm command: its command line, what it
// wrote to standard error, and the underlying error.
type Error struct {
	Cmd    string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	if e.Stderr == "" {
		return e.Cmd + ": " + e.Err.Error()
	}
	return e.Cmd + ": " + e.Err.Error() + ": " + e.Stderr
}

func (e *Error) Unwrap() error { return e.Err }

// Backend runs jobs as Slurm batch jobs through the Slurm commands
// (sbatch, squeue, sacct, scancel, sinfo), so it needs nothing but a
// working Slurm client on this machine and sandboxes on a filesystem
// the compute nodes share. Safe for concurrent use.
type Backend struct {
	cfg Config
	log *slog.Logger
	// jobcomp is set once sacct has said accounting storage is disabled
	// (no slurmdbd): from then on finished jobs are read from the job
	// completion file with `sacct -c`.
	jobcomp atomic.Bool
}

var _ jobs.Backend = (*Backend)(nil)

// New returns a backend for the Slurm that cfg's commands reach.
func New(cfg Config) *Backend {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Backend{cfg: cfg, log: log}
	if b.cfg.Command == nil {
		b.cfg.Command = b.exec
	}
	return b
}

// exec is the default Command.
func (b *Backend) exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), b.cfg.Env...)
	if ra := b.cfg.RunAs; ra.UID != 0 && os.Geteuid() != 0 && (name == "sbatch" || name == "scancel") {
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: ra.UID, Gid: ra.GID, Groups: []uint32{}}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Do not wait forever for pipes held open by a stuck grandchild.
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return stdout.Bytes(), &Error{Cmd: name + " " + strings.Join(args, " "), Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return stdout.Bytes(), nil
}

// run runs one command with the configured timeout; every error names
// the command.
func (b *Backend) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	out, err := b.cfg.Command(ctx, name, args...)
	if err != nil {
		var se *Error
		if !errors.As(err, &se) {
			err = &Error{Cmd: name + " " + strings.Join(args, " "), Err: err}
		}
		return string(out), err
	}
	return string(out), nil
}

// slurmJobPrefix marks our jobs in squeue, so Capacity counts only them.
const slurmJobPrefix = "sitebox-"

// Submit writes <sandbox>/job.sbatch and submits it with sbatch. Slurm
// has no per-job disk quota, so Spec.DiskMB is not enforced here.
func (b *Backend) Submit(ctx context.Context, j *jobs.Job) (string, error) {
	script, err := slurmScript(j, b.cfg.Partition)
	if err != nil {
		return "", fmt.Errorf("slurm submit %s: %w", j.ID, err)
	}
	// Slurm does not make the directories of --output and --error: a
	// job whose log cannot be opened fails without a word.
	for _, name := range []string{j.Spec.Stdout, j.Spec.Stderr} {
		if d := filepath.Dir(name); name != "" && d != "." {
			if err := os.MkdirAll(filepath.Join(j.SandboxDir, d), 0o755); err != nil {
				return "", fmt.Errorf("slurm submit %s: %w", j.ID, err)
			}
		}
	}
	file := filepath.Join(j.SandboxDir, "job.sbatch")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		return "", fmt.Errorf("slurm submit %s: %w", j.ID, err)
	}
	args := []string{"--parsable", file}
	if ra := b.cfg.RunAs; ra.UID != 0 {
		// The job writes its logs and outputs as that account.
		if err := ra.ClaimSandbox(j.SandboxDir); err != nil {
			return "", fmt.Errorf("slurm submit %s: %w", j.ID, err)
		}
		if os.Geteuid() == 0 {
			args = append([]string{"--uid=" + strconv.FormatUint(uint64(ra.UID), 10), "--gid=" + strconv.FormatUint(uint64(ra.GID), 10)}, args...)
		}
	}
	out, err := b.run(ctx, "sbatch", args...)
	if err != nil {
		return "", fmt.Errorf("slurm submit %s: %w", j.ID, err)
	}
	// --parsable prints "ID" or, in a multi-cluster setup, "ID;CLUSTER".
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if !slurmJobID(id) {
		return "", fmt.Errorf("slurm submit %s: sbatch printed %q, not a job id", j.ID, strings.TrimSpace(out))
	}
	b.log.Info("submitted", "job", j.ID, "slurm_id", id, "run_as", b.cfg.RunAs.Name)
	return id, nil
}

// Release takes an ended job's sandbox back from the run_as account.
func (b *Backend) Release(j *jobs.Job) error {
	if b.cfg.RunAs.UID == 0 {
		return nil
	}
	return b.cfg.RunAs.ReclaimSandbox(j.SandboxDir)
}

// slurmJobID reports whether s is a plain Slurm job id (digits).
func slurmJobID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Capacity counts the idle CPUs of the partition's idle and mixed nodes
// (sinfo) and our jobs running and waiting (squeue): two commands.
func (b *Backend) Capacity(ctx context.Context) (jobs.Capacity, error) {
	args := []string{"-h", "-N", "-o", "%N|%t|%C"}
	if b.cfg.Partition != "" {
		args = append(args, "-p", b.cfg.Partition)
	}
	out, err := b.run(ctx, "sinfo", args...)
	if err != nil {
		return jobs.Capacity{FreeCPUs: -1}, fmt.Errorf("slurm capacity: %w", err)
	}
	c := jobs.Capacity{FreeCPUs: sinfoFreeCPUs(out)}
	// Our jobs are the run_as account's (the box's own without one).
	who := "--me"
	if b.cfg.RunAs.Name != "" {
		who = "--user=" + b.cfg.RunAs.Name
	}
	args = []string{"-h", who, "-o", "%T|%j"}
	if b.cfg.Partition != "" {
		args = append(args, "-p", b.cfg.Partition)
	}
	if out, err = b.run(ctx, "squeue", args...); err != nil {
		return jobs.Capacity{FreeCPUs: -1}, fmt.Errorf("slurm capacity: %w", err)
	}
	for _, line := range strings.Split(out, "\n") {
		st, name, ok := strings.Cut(strings.TrimSpace(line), "|")
		if !ok || !strings.HasPrefix(name, slurmJobPrefix) {
			continue
		}
		switch s, _ := slurmState(st, "", false); s {
		case jobs.Running:
			c.Running++
		case jobs.Routed:
			c.Queued++
		}
	}
	return c, nil
}

func (b *Backend) Cancel(ctx context.Context, j *jobs.Job) error {
	if !slurmJobID(j.Remote) {
		return fmt.Errorf("slurm cancel %s: %q is not a Slurm job id", j.ID, j.Remote)
	}
	_, err := b.run(ctx, "scancel", j.Remote)
	if slurmStderr(err, "Invalid job id") || slurmStderr(err, "already completing or completed") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("slurm cancel %s: %w", j.ID, err)
	}
	return nil
}

// slurmJobName is the --job-name of job id.
func slurmJobName(id string) string {
	return slurmJobPrefix + strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, id)
}
