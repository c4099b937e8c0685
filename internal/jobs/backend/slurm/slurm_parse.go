package slurm

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sitebox/internal/jobs"
)

// parseSqueue reads `squeue -h -o "%i|%T|%r|%S"` lines into updates by
// Slurm job id.
func parseSqueue(out string) map[string]jobs.Update {
	res := map[string]jobs.Update{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 4 || !slurmJobID(f[0]) {
			continue
		}
		st, reason := slurmState(f[1], f[2], false)
		u := jobs.Update{State: st, Reason: reason}
		if st == jobs.Running {
			u.Started = slurmTime(f[3]) // for a pending job %S is only an estimate
		}
		res[f[0]] = u
	}
	return res
}

// parseSacct reads `sacct -n -P -X -o JobID,State,ExitCode,Elapsed,
// TotalCPU,Start,End` lines. A requeued job can have several records;
// the last is the latest.
func parseSacct(out string) map[string]jobs.Update {
	res := map[string]jobs.Update{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 7 || !slurmJobID(f[0]) {
			continue
		}
		code, sig, codeOK := parseExitCode(f[2])
		u := jobs.Update{ExitCode: code, WallTime: slurmDuration(f[3]), CPUTime: slurmDuration(f[4]), Started: slurmTime(f[5]), Finished: slurmTime(f[6]),
			// The job completion file has no CPU time: unknown, not 0.
			CPUUnknown: strings.TrimSpace(f[4]) == ""}
		if sig > 0 && code == 0 {
			u.ExitCode = 128 + sig // as a shell reports a death by signal
		}
		state, _, _ := strings.Cut(f[1], " ") // "CANCELLED by 0"
		u.State, u.Reason = slurmState(state, "", true)
		if u.State == jobs.Failed && state == "FAILED" {
			switch {
			case !codeOK:
				// Not "exited with code 0": nothing says it did.
				u.Reason = fmt.Sprintf("failed in Slurm, with an exit code sacct gave as %q, which is not CODE:SIGNAL", f[2])
			case sig > 0:
				u.Reason = fmt.Sprintf("killed by signal %d in Slurm", sig)
			default:
				u.Reason = fmt.Sprintf("exited with code %d in Slurm", code)
			}
		}
		res[f[0]] = u
	}
	return res
}

// slurmState maps a Slurm job state (squeue %T, sacct State) to ours.
// reason is squeue's %r for a waiting job. final says the state comes
// from accounting: the job has left the queue, so a state that is not an
// end there is unexplained and the job is reported Lost, not guessed.
func slurmState(st, reason string, final bool) (jobs.State, string) {
	waiting := "waiting in Slurm"
	if reason != "" && reason != "None" {
		waiting += ": " + reason
	}
	var s jobs.State
	var why string
	switch st {
	case "PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT":
		s, why = jobs.Routed, waiting
	case "CONFIGURING":
		s, why = jobs.Routed, "waiting in Slurm for its nodes to boot"
	case "RUNNING", "COMPLETING", "SIGNALING", "STAGE_OUT", "RESIZING":
		s, why = jobs.Running, "running in Slurm"
	case "SUSPENDED", "STOPPED":
		s, why = jobs.Running, "suspended in Slurm"
	case "COMPLETED":
		return jobs.Completed, "completed in Slurm"
	case "FAILED":
		return jobs.Failed, "failed in Slurm"
	case "TIMEOUT":
		return jobs.Failed, "exceeded its wall time in Slurm"
	case "OUT_OF_MEMORY":
		return jobs.Failed, "ran out of memory in Slurm"
	case "NODE_FAIL":
		return jobs.Failed, "its Slurm node failed"
	case "BOOT_FAIL":
		return jobs.Failed, "its Slurm node failed to boot"
	case "DEADLINE":
		return jobs.Failed, "missed its deadline in Slurm"
	case "PREEMPTED":
		return jobs.Failed, "preempted in Slurm"
	case "CANCELLED":
		return jobs.Cancelled, "cancelled in Slurm"
	case "REVOKED":
		return jobs.Failed, "revoked: a sibling cluster of the Slurm federation runs it"
	default:
		if final {
			return jobs.Lost, "unknown Slurm state " + st
		}
		return jobs.Routed, "in unknown Slurm state " + st
	}
	if final {
		return jobs.Lost, "Slurm accounting says " + st + " for a job squeue no longer lists"
	}
	return s, why
}

// parseExitCode splits sacct's "CODE:SIGNAL"; ok is false (and code and
// sig 0) when s is not that.
func parseExitCode(s string) (code, sig int, ok bool) {
	c, g, found := strings.Cut(strings.TrimSpace(s), ":")
	code, err1 := strconv.Atoi(c)
	sig, err2 := strconv.Atoi(g)
	if !found || err1 != nil || err2 != nil || code < 0 || sig < 0 {
		return 0, 0, false
	}
	return code, sig, true
}

// slurmDuration parses [D-][HH:]MM:SS[.mmm] (Elapsed, TotalCPU) into
// seconds; anything else is 0.
func slurmDuration(s string) float64 {
	var days float64
	if d, rest, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil {
			return 0
		}
		days, s = float64(n), rest
	}
	parts := strings.Split(s, ":")
	if s == "" || len(parts) > 3 {
		return 0
	}
	total := 0.0
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 {
			return 0
		}
		total = total*60 + v
	}
	return days*86400 + total
}

// slurmTime parses Slurm's local-time timestamps; "Unknown", "None",
// "N/A" and the like are zero.
func slurmTime(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		return time.Time{}
	}
	return t
}

// sinfoFreeCPUs sums the idle CPUs ("%C" is allocated/idle/other/total)
// of idle and mixed nodes in `sinfo -h -N -o "%N|%t|%C"` output. A node
// in several partitions is listed once per partition: count it once.
func sinfoFreeCPUs(out string) int {
	seen := map[string]bool{}
	free := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 || seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		// Flags follow the state: * not responding, ~ powered off, # powering up, ! powering down, % …
		state := strings.TrimRight(f[1], "*~#!%$@^-+")
		if state != "idle" && state != "mix" {
			continue
		}
		cpus := strings.Split(f[2], "/")
		// An idle count that is not a number adds nothing, as a line
		// that is not a node does: a guess would send jobs to no CPU.
		if len(cpus) != 4 {
			continue
		}
		if n, err := strconv.Atoi(cpus[1]); err == nil && n > 0 {
			free += n
		}
	}
	return free
}

// Cancel runs scancel. A job Slurm no longer knows or that has already
// ended counts as cancelled: it is not running, which is what the caller
// wants.

// slurmStderr reports whether err is a Slurm command failure whose
// stderr contains text.
func slurmStderr(err error, text string) bool {
	var se *Error
	return errors.As(err, &se) && strings.Contains(se.Stderr, text)
}

// parseSstat sums the CPU time of each job's steps from `sstat -a -n -P
// -o JobID,AveCPU` ("123.batch|00:00:05"): with one task per step the
// average is the step's CPU time.
func parseSstat(out string) map[string]float64 {
	res := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		step, cpu, ok := strings.Cut(strings.TrimSpace(line), "|")
		id, _, _ := strings.Cut(step, ".")
		if !ok || !slurmJobID(id) {
			continue
		}
		// A step not yet sampled can show a wrapped-around unsigned
		// value; no real step has used 30 years of CPU.
		if v := slurmDuration(cpu); v < 1e9 {
			res[id] += v
		}
	}
	return res
}
