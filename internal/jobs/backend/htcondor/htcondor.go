// Package htcondor is the job router's backend for an HTCondor schedd.
package htcondor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/jobs"
)

// Backend submits to a local HTCondor schedd with condor_submit,
// follows jobs with condor_q and condor_history and removes them with
// condor_rm. UNTESTED: Debian 12 has no HTCondor package, so this code has
// never run against a real schedd (see README); its command lines follow
// the HTCondor manual.
type Backend struct {
	Env []string // extra environment for the condor_* commands
}

var _ jobs.Backend = (*Backend)(nil)

func (h *Backend) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), h.Env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// Capacity: free CPUs are the pool's business; the router's caps apply.
func (h *Backend) Capacity(ctx context.Context) (jobs.Capacity, error) {
	return jobs.Capacity{FreeCPUs: -1}, nil
}

// Submit writes a submit file in the sandbox and runs condor_submit.
func (h *Backend) Submit(ctx context.Context, j *jobs.Job) (string, error) {
	sp := j.Spec
	var b strings.Builder
	fmt.Fprintf(&b, "universe = vanilla\nexecutable = %s\n", sp.Executable)
	if len(sp.Arguments) > 0 {
		quoted := make([]string, len(sp.Arguments))
		for i, a := range sp.Arguments {
			quoted[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(a, "'", "''"), `"`, `""`) + "'"
		}
		fmt.Fprintf(&b, "arguments = \"%s\"\n", strings.Join(quoted, " "))
	}
	var env []string
	for k, v := range sp.Env {
		env = append(env, k+"='"+strings.ReplaceAll(v, "'", "''")+"'")
	}
	if len(env) > 0 {
		fmt.Fprintf(&b, "environment = \"%s\"\n", strings.Join(env, " "))
	}
	fmt.Fprintf(&b, "initialdir = %s\noutput = %s\nerror = %s\nrequest_cpus = %d\nrequest_memory = %d\n",
		j.SandboxDir, sp.Stdout, sp.Stderr, sp.CPUs, sp.MemoryMB)
	// The box's id in the job ad, so Find can look the job up after a
	// crash between condor_submit and the record of its answer.
	fmt.Fprintf(&b, "+SiteboxJob = \"%s\"\n", j.ID)
	b.WriteString("should_transfer_files = NO\nqueue 1\n")
	file := filepath.Join(j.SandboxDir, "job.sub")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	out, err := h.run(ctx, "condor_submit", "-terse", file)
	if err != nil {
		return "", err
	}
	// -terse prints "CLUSTER.PROC - CLUSTER.PROC".
	id, _, _ := strings.Cut(strings.TrimSpace(out), " ")
	return id, nil
}

// boxJobID is the form of the box's job ids ("cluster.proc"), checked
// before one goes into a constraint.
var boxJobID = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// Find looks for the HTCondor job of j's current attempt, for a box that
// stopped between condor_submit and the record of its answer: a job whose
// SiteboxJob is j.ID (condor_q, else condor_history) and whose id is none
// of j.Remotes (earlier attempts). "" when HTCondor has none.
func (h *Backend) Find(ctx context.Context, j *jobs.Job) (string, error) {
	if !boxJobID.MatchString(j.ID) {
		return "", fmt.Errorf("htcondor find: %q is not a job id", j.ID)
	}
	constraint := fmt.Sprintf("SiteboxJob == %q", j.ID)
	for _, tool := range []string{"condor_q", "condor_history"} {
		out, err := h.run(ctx, tool, "-constraint", constraint, "-af", "ClusterId", "ProcId")
		if err != nil {
			return "", fmt.Errorf("htcondor find %s: %w", j.ID, err)
		}
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			if id := f[0] + "." + f[1]; !slices.Contains(j.Remotes, id) {
				return id, nil
			}
		}
	}
	return "", nil
}

// Poll asks condor_q, then condor_history for jobs that left the queue.
func (h *Backend) Poll(ctx context.Context, js []*jobs.Job) ([]jobs.Update, error) {
	var out []jobs.Update
	for _, j := range js {
		line, err := h.run(ctx, "condor_q", j.Remote, "-af", "JobStatus", "ExitCode", "RemoteUserCpu", "RemoteWallClockTime")
		if err == nil && strings.TrimSpace(line) == "" {
			line, err = h.run(ctx, "condor_history", j.Remote, "-limit", "1", "-af", "JobStatus", "ExitCode", "RemoteUserCpu", "RemoteWallClockTime")
			if err == nil && strings.TrimSpace(line) == "" {
				out = append(out, jobs.Update{ID: j.ID, State: jobs.Lost, Reason: "in neither condor_q nor condor_history"})
				continue
			}
		}
		if err != nil {
			return out, err
		}
		out = append(out, condorUpdate(j.ID, strings.Fields(line)))
	}
	return out, nil
}

// condorUpdate maps JobStatus (1 idle, 2 running, 3 removed, 4 completed,
// 5 held, 6 transferring, 7 suspended).
func condorUpdate(id string, f []string) jobs.Update {
	u := jobs.Update{ID: id, State: jobs.Routed}
	get := func(i int) float64 {
		if i < len(f) {
			v, _ := strconv.ParseFloat(f[i], 64)
			return v
		}
		return 0
	}
	u.CPUTime, u.WallTime = get(2), get(3)
	switch int(get(0)) {
	case 2, 6:
		u.State = jobs.Running
	case 3:
		u.State, u.Reason = jobs.Cancelled, "removed"
	case 4:
		u.ExitCode = int(get(1))
		u.State = jobs.Completed
		if u.ExitCode != 0 {
			u.State, u.Reason = jobs.Failed, fmt.Sprintf("exited with code %d", u.ExitCode)
		}
	case 5:
		u.Reason = "held"
	case 7:
		u.Reason = "suspended"
	}
	return u
}

// Cancel runs condor_rm.
func (h *Backend) Cancel(ctx context.Context, j *jobs.Job) error {
	_, err := h.run(ctx, "condor_rm", j.Remote)
	return err
}
