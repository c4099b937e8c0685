package doctor

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"sitebox/internal/config"
	"sitebox/internal/jobs"
)

// checkSlurm runs sinfo for each Slurm domain, the way the job router
// will reach the cluster, and explains the usual reasons it cannot.
func checkSlurm(ctx context.Context, cfg *config.Config, o *Options) []Check {
	var out []Check
	if cfg.Jobs.Enabled {
		for _, d := range cfg.Jobs.Domains {
			if d.Type == "slurm" {
				out = append(out, checkSinfo(ctx, d, o))
			}
		}
	}
	if len(out) == 0 {
		return []Check{{Name: "slurm", Status: StatusSkip, Summary: "no [[jobs.domain]] of type slurm"}}
	}
	return out
}

func checkSinfo(ctx context.Context, d jobs.DomainSettings, o *Options) Check {
	c := Check{Name: "domain " + d.Name}
	var env []string
	if d.SlurmConf != "" {
		env = append(env, "SLURM_CONF="+d.SlurmConf)
	}
	args := []string{"--noheader", "--format=%D %T"}
	if d.Partition != "" {
		args = append(args, "--partition="+d.Partition)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	outb, err := o.RunCommand(ctx, env, "sinfo", args...)
	text := strings.TrimSpace(string(outb))
	if err != nil {
		return sinfoFailed(c, d, text, err, ctx.Err() != nil, o)
	}
	nodes, bad, states := parseSinfo(text)
	where := "the cluster"
	if d.Partition != "" {
		where = "partition " + d.Partition
	}
	switch {
	case nodes == 0:
		c.Status = StatusError
		c.Summary = "sinfo shows no nodes in " + where
		c.Explain = "Jobs routed to this domain would wait forever."
		c.Fix = "Check the partition name ([[jobs.domain]] partition) against `sinfo -s`."
	case bad == nodes:
		c.Status = StatusError
		c.Summary = fmt.Sprintf("all %s of %s are unavailable (%s)", plural(nodes, "node"), where, states)
		c.Explain = "No job can start in this domain until nodes come back."
		c.Fix = "See why with `sinfo -R`; `scontrol update nodename=NODE state=resume` once fixed."
	case bad > 0:
		c.Status = StatusWarn
		c.Summary = fmt.Sprintf("%s in %s, %d unavailable (%s)", plural(nodes, "node"), where, bad, states)
		c.Explain = "Fewer nodes than configured can take jobs."
		c.Fix = "See why with `sinfo -R`."
	default:
		c.Status = StatusOK
		c.Summary = fmt.Sprintf("%s in %s (%s)", plural(nodes, "node"), where, states)
	}
	return c
}

// parseSinfo reads "%D %T" lines ("3 idle", "1 down*") into the node
// count, the unavailable ones and a short list of states.
func parseSinfo(text string) (nodes, bad int, states string) {
	var parts []string
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		nodes += n
		st := strings.ToLower(f[1])
		// "*" marks a node not responding; drain, down and fail take it
		// out of scheduling.
		if strings.HasSuffix(st, "*") || strings.HasPrefix(st, "down") || strings.HasPrefix(st, "drain") || strings.HasPrefix(st, "fail") || st == "unknown" {
			bad += n
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, f[1]))
	}
	return nodes, bad, strings.Join(parts, ", ")
}

// sinfoFailed explains a failed sinfo from its output.
func sinfoFailed(c Check, d jobs.DomainSettings, text string, err error, timedOut bool, o *Options) Check {
	c.Status = StatusError
	last := lastLine(text)
	if last == "" {
		last = err.Error()
	}
	c.Summary = "sinfo failed: " + last
	low := strings.ToLower(text)
	conf := "Slurm's default slurm.conf"
	if d.SlurmConf != "" {
		conf = d.SlurmConf
	}
	switch {
	case errors.Is(err, exec.ErrNotFound):
		c.Summary = "sinfo is not installed"
		c.Explain = "The box drives Slurm with its client commands (sbatch, squeue, sacct, scancel, sinfo)."
		c.Fix = "Install the Slurm client (Debian: apt-get install slurm-client) in the version of the cluster, with its slurm.conf."
	case timedOut:
		c.Summary = fmt.Sprintf("sinfo did not finish within %s", o.Timeout)
		c.Explain = "A controller that answers this slowly is overloaded or unreachable through a firewall that drops packets."
		c.Fix = "Try `time sinfo` on this box and `scontrol ping`."
	case strings.Contains(low, "munge") || strings.Contains(low, "invalid credential") || strings.Contains(low, "authentication"):
		c.Explain = "Slurm proves who calls with MUNGE: munged must run on this box with the same /etc/munge/munge.key as the controller, and the clocks must agree (credentials last 5 minutes)."
		c.Fix = "Start munged (`systemctl enable --now munge`), copy munge.key from the controller (owner munge, mode 0400), and test with `munge -n | ssh CONTROLLER unmunge`."
	case strings.Contains(low, "unable to contact slurm controller") || strings.Contains(low, "connection refused") || strings.Contains(low, "connect failure"):
		c.Explain = "slurmctld, the cluster's controller, does not answer: it is down, or a firewall blocks its port (SlurmctldPort, 6817 by default) from this box."
		c.Fix = fmt.Sprintf("Check the controller named by SlurmctldHost in %s (`scontrol ping`); open tcp/6817 from this box to it.", conf)
	case strings.Contains(low, "configuration source") || strings.Contains(low, "slurm.conf") || strings.Contains(low, "s_p_parse_file"):
		c.Explain = "sinfo cannot find or read slurm.conf, so it does not know the cluster."
		c.Fix = "Copy the cluster's slurm.conf to this box and set slurm_conf in the [[jobs.domain]] to its path (or place it in /etc/slurm/)."
	default:
		c.Explain = "The job router cannot see the cluster, so no job goes to this domain."
		c.Fix = "Run `sinfo` by hand on this box (with SLURM_CONF=" + d.SlurmConf + " if set) and fix what it says."
	}
	return c
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
