package slurm

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sitebox/internal/jobs"
	"sitebox/internal/jobs/jobstest"
	"sitebox/internal/jobs/local/localtest"
	"sitebox/internal/jobs/spec"
	"sitebox/test/peers"
)

// The router with a real Slurm as the "site" domain: site-only jobs run
// there; jobs that may run anywhere fill the box's one core, then go to
// Slurm; the domain's cap holds the rest back with the reason.
func TestRouterWithSlurm(t *testing.T) {
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
		peers.Require(t, tool)
	}
	dir := localtest.ReachableDir(t)
	sl, err := peers.StartSlurm(context.Background(), peers.SlurmConfig{WorkDir: filepath.Join(dir, "slurm"), CPUs: 2, MemoryMB: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sl.Stop)
	e := jobstest.Start(t, []string{"sbxslot14"}, func(c *jobs.Settings, d *jobs.Deps) {
		d.PollEvery = 500 * time.Millisecond
		c.Domains = []jobs.DomainSettings{{Name: "site", Type: "slurm", MaxJobs: 2, MaxIdleJobs: 2}}
		d.Backend = func(jobs.DomainSettings) (jobs.Backend, error) {
			return New(Config{Partition: sl.Partition, Env: sl.Env(), RunAs: localtest.Slots(t, "sbxslot3")[0]}), nil
		}
	})
	spec := func(script string, domains ...string) spec.Spec {
		sp := jobstest.Sh(script)
		sp.MemoryMB = 100
		sp.Domains = domains
		return sp
	}
	only := e.Submit("alice", spec("echo from slurm", "site"))[0]
	j := e.WaitState(only.ID, jobs.Completed, 60*time.Second)
	if j.Domain != "site" || j.Remote == "" {
		t.Errorf("site job ran in %q as %q", j.Domain, j.Remote)
	}
	rc, _ := e.S.Logs(only.ID, "stdout")
	out, _ := io.ReadAll(rc)
	rc.Close()
	if string(out) != "from slurm\n" {
		t.Errorf("stdout of the Slurm job %q", out)
	}
	// Ended, its sandbox is the box's again.
	if fi, err := os.Stat(j.SandboxDir); err != nil || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Geteuid()) {
		t.Errorf("the ended Slurm job's sandbox was not taken back: %v", err)
	}

	// One local core: the first "local,site" job takes it, the next go to
	// Slurm, up to its max_jobs of 2; the fourth waits and says why.
	// They run long enough that none ends while the placement is looked
	// at (on a loaded machine starting them takes seconds), then are
	// cancelled, in both domains.
	js := e.Submit("alice", spec("sleep 60", "local", "site"), spec("sleep 60", "local", "site"), spec("sleep 60", "local", "site"), spec("sleep 60", "local", "site"))
	var domains map[string]int
	var waiting *jobs.Job
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		domains, waiting = map[string]int{}, nil
		for _, x := range js {
			g, _ := e.S.Get(x.ID)
			domains[g.Domain]++
			if g.State == jobs.Idle {
				waiting = g
			}
		}
		if domains["local"] == 1 && domains["site"] == 2 && waiting != nil || time.Now().After(deadline) {
			break
		}
	}
	if domains["local"] != 1 || domains["site"] != 2 || waiting == nil {
		for _, x := range js {
			g, _ := e.S.Get(x.ID)
			t.Logf("job %s: %s in %q (%s), slot %q, remote %q", g.ID, g.State, g.Domain, g.Reason, g.Slot, g.Remote)
		}
		t.Fatalf("placement %v, waiting %+v", domains, waiting)
	}
	if !strings.Contains(waiting.Reason, "site: holds 2 jobs, its max_jobs") || !strings.Contains(waiting.Reason, "local:") {
		t.Errorf("the waiting job says %q", waiting.Reason)
	}
	for _, x := range js {
		if err := e.S.Cancel(e.Ctx, x.ID, jobstest.As("alice")); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range js {
		e.WaitState(x.ID, jobs.Cancelled, 60*time.Second)
	}

	// Cancelled in Slurm.
	c := e.Submit("alice", spec("sleep 60", "site"))[0]
	e.WaitState(c.ID, jobs.Routed, 30*time.Second)
	if err := e.S.Cancel(e.Ctx, c.ID, jobstest.As("alice")); err != nil {
		t.Fatal(err)
	}
	e.WaitState(c.ID, jobs.Cancelled, 5*time.Second)
}
