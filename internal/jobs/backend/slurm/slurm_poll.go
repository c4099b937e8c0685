package slurm

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sitebox/internal/jobs"
)

// Poll asks squeue about all of js at once, and accounting (sacct) about
// those squeue no longer lists. A job in neither is reported Lost with
// that reason, never guessed at.
func (b *Backend) Poll(ctx context.Context, js []*jobs.Job) ([]jobs.Update, error) {
	ups := make([]jobs.Update, 0, len(js))
	var ids []string
	for _, j := range js {
		if !slurmJobID(j.Remote) {
			ups = append(ups, jobs.Update{ID: j.ID, State: jobs.Lost, Reason: fmt.Sprintf("no Slurm job id (have %q)", j.Remote)})
			continue
		}
		ids = append(ids, j.Remote)
	}
	if len(ids) == 0 {
		return ups, nil
	}
	queued := map[string]jobs.Update{}
	for _, chunk := range slurmChunks(ids) {
		out, err := b.run(ctx, "squeue", "-h", "-j", chunk, "-o", "%i|%T|%r|%S")
		// squeue fails when every id it is given is unknown.
		if slurmStderr(err, "Invalid job id specified") {
			out, err = "", nil
		}
		if err != nil {
			return nil, fmt.Errorf("slurm poll: %w", err)
		}
		for id, u := range parseSqueue(out) {
			queued[id] = u
		}
	}
	var gone, running []string
	for _, id := range ids {
		if u, ok := queued[id]; !ok {
			gone = append(gone, id)
		} else if u.State == jobs.Running {
			running = append(running, id)
		}
	}
	// CPU of running jobs from their steps (sstat): the job completion
	// file has none, so this is all the box learns where Slurm keeps no
	// accounting storage. A failure only leaves the CPU unsampled.
	for id, cpu := range b.runningCPU(ctx, running) {
		u := queued[id]
		u.CPUTime = cpu
		queued[id] = u
	}
	done := map[string]jobs.Update{}
	why := ""
	if len(gone) > 0 {
		var err error
		done, why, err = b.accounting(ctx, gone)
		if err != nil {
			return nil, fmt.Errorf("slurm poll: %w", err)
		}
	}
	for _, j := range js {
		if !slurmJobID(j.Remote) {
			continue
		}
		u, ok := queued[j.Remote]
		if !ok {
			u, ok = done[j.Remote]
		}
		if !ok {
			u = jobs.Update{State: jobs.Lost, Reason: "Slurm job " + j.Remote + " is in neither squeue nor accounting"}
			if why != "" {
				u.Reason = "Slurm job " + j.Remote + " is not in squeue and accounting cannot tell: " + why
			}
		}
		u.ID = j.ID
		ups = append(ups, u)
	}
	return ups, nil
}

// slurmChunks joins ids with commas, a few hundred per command line.
func slurmChunks(ids []string) []string {
	var out []string
	for len(ids) > 0 {
		n := min(len(ids), 500)
		out = append(out, strings.Join(ids[:n], ","))
		ids = ids[n:]
	}
	return out
}

// sacctFields is what Poll reads from accounting. TotalCPU is empty in
// the job completion file (sacct -c): CPU time is then reported as 0,
// unknown.
const sacctFields = "JobID,State,ExitCode,Elapsed,TotalCPU,Start,End"

// accounting looks finished jobs up with sacct, or with `sacct -c` (the
// job completion file) where accounting storage is disabled. why is set
// when Slurm keeps no record of finished jobs at all, so these jobs are
// unknowable. Other failures (timeouts, slurmdbd down) are errors: they
// say nothing about the jobs, and the next poll asks again.
func (b *Backend) accounting(ctx context.Context, ids []string) (res map[string]jobs.Update, why string, err error) {
	res = map[string]jobs.Update{}
	for _, chunk := range slurmChunks(ids) {
		args := []string{"-n", "-P", "-X", "-j", chunk, "-o", sacctFields}
		var out string
		if !b.jobcomp.Load() {
			out, err = b.run(ctx, "sacct", args...)
			if slurmStderr(err, "accounting storage is disabled") {
				b.log.Info("Slurm accounting storage is disabled; reading the job completion file (sacct -c)")
				b.jobcomp.Store(true)
			}
		}
		if b.jobcomp.Load() {
			out, err = b.run(ctx, "sacct", append([]string{"-c"}, args...)...)
			switch {
			case slurmStderr(err, "job completion is disabled"):
				return nil, "Slurm has neither accounting storage nor a job completion log", nil
			case slurmStderr(err, "No such file or directory"):
				// jobcomp/filetxt makes its file when the first job
				// ends: none has, so these jobs are not in it.
				out, err = "", nil
			}
		}
		if err != nil {
			return nil, "", err
		}
		for id, u := range parseSacct(out) {
			res[id] = u
		}
	}
	return res, "", nil
}

// Find looks for the Slurm job of j's current attempt, for a box that
// stopped between sbatch and the record of its answer: a job of j's name
// and sandbox (squeue, else accounting) whose id is none of j.Remotes
// (earlier attempts). "" when Slurm has none.
func (b *Backend) Find(ctx context.Context, j *jobs.Job) (string, error) {
	name := slurmJobName(j.ID)
	out, err := b.run(ctx, "squeue", "-h", "-n", name, "-o", "%i|%Z")
	if err != nil {
		return "", fmt.Errorf("slurm find %s: %w", j.ID, err)
	}
	if id := pickFound(out, j); id != "" {
		return id, nil
	}
	// Already ended: the accounting of the time since its submission.
	since := j.Submitted.Add(-time.Hour).Format("2006-01-02T15:04:05")
	args := []string{"-n", "-P", "-X", "--name=" + name, "-S", since, "-o", "JobID,WorkDir"}
	if b.jobcomp.Load() {
		args = append([]string{"-c"}, args...)
	}
	out, err = b.run(ctx, "sacct", args...)
	if slurmStderr(err, "accounting storage is disabled") {
		b.jobcomp.Store(true)
		out, err = b.run(ctx, "sacct", append([]string{"-c"}, args...)...)
	}
	if slurmStderr(err, "No such file or directory") { // no job has ended yet
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("slurm find %s: %w", j.ID, err)
	}
	return pickFound(out, j), nil
}

// pickFound picks from "ID|WORKDIR" lines the job in j's sandbox that is
// not an earlier attempt's.
func pickFound(out string, j *jobs.Job) string {
	found := ""
	for _, line := range strings.Split(out, "\n") {
		id, dir, ok := strings.Cut(strings.TrimSpace(line), "|")
		if !ok || !slurmJobID(id) || filepath.Clean(dir) != filepath.Clean(j.SandboxDir) || slices.Contains(j.Remotes, id) {
			continue
		}
		found = id
	}
	return found
}

// runningCPU asks sstat for the CPU time so far of running jobs.
func (b *Backend) runningCPU(ctx context.Context, ids []string) map[string]float64 {
	res := map[string]float64{}
	for _, chunk := range slurmChunks(ids) {
		out, err := b.run(ctx, "sstat", "-a", "-n", "-P", "-j", chunk, "-o", "JobID,AveCPU")
		if err != nil {
			b.log.Debug("sstat failed; CPU of running jobs not sampled", "err", err)
			continue
		}
		for id, cpu := range parseSstat(out) {
			res[id] = cpu
		}
	}
	return res
}
