package jobs

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sitebox/internal/jobs/spec"
	"strings"
	"testing"
	"time"

	"sitebox/internal/peers"
)

// The router with a real Slurm as the "site" domain: site-only jobs run
// there; jobs that may run anywhere fill the box's one core, then go to
// Slurm; the domain's cap holds the rest back with the reason.
func TestRouterWithSlurm(t *testing.T) {
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
		peers.Require(t, tool)
	}
	dir := reachableDir(t)
	sl, err := peers.StartSlurm(context.Background(), peers.SlurmConfig{WorkDir: filepath.Join(dir, "slurm"), CPUs: 2, MemoryMB: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sl.Stop)
	e := newSvc(t, func(c *Config) {
		c.PollEvery = 500 * time.Millisecond
		c.Domains = []Domain{{Name: "site", Backend: NewSlurm(SlurmBackendConfig{Partition: sl.Partition, Env: sl.Env(), RunAs: testSlots(t, "sbxslot3")[0]}), MaxJobs: 2, MaxIdleJobs: 2}}
	})
	spec := func(script string, domains ...string) spec.Spec {
		sp := sh(script)
		sp.MemoryMB = 100
		sp.Domains = domains
		return sp
	}
	only := e.submit("alice", spec("echo from slurm", "site"))[0]
	j := e.waitState(only.ID, Completed, 60*time.Second)
	if j.Domain != "site" || j.Remote == "" {
		t.Errorf("site job ran in %q as %q", j.Domain, j.Remote)
	}
	rc, _ := e.s.Logs(only.ID, "stdout")
	out, _ := io.ReadAll(rc)
	rc.Close()
	if string(out) != "from slurm\n" {
		t.Errorf("stdout of the Slurm job %q", out)
	}
	// Ended, its sandbox is the box's again.
	if fi, err := os.Stat(j.SandboxDir); err != nil || owner(fi) != uint32(os.Geteuid()) {
		t.Errorf("the ended Slurm job's sandbox was not taken back: %v", err)
	}

	// One local core: the first "local,site" job takes it, the next go to
	// Slurm, up to its max_jobs of 2; the fourth waits and says why.
	js := e.submit("alice", spec("sleep 3", "local", "site"), spec("sleep 3", "local", "site"), spec("sleep 3", "local", "site"), spec("sleep 3", "local", "site"))
	time.Sleep(2 * time.Second)
	domains := map[string]int{}
	var waiting *Job
	for _, x := range js {
		g, _ := e.s.Get(x.ID)
		domains[g.Domain]++
		if g.State == Idle {
			waiting = g
		}
	}
	if domains["local"] != 1 || domains["site"] != 2 || waiting == nil {
		t.Fatalf("placement %v, waiting %+v", domains, waiting)
	}
	if !strings.Contains(waiting.Reason, "site: holds 2 jobs, its max_jobs") || !strings.Contains(waiting.Reason, "local:") {
		t.Errorf("the waiting job says %q", waiting.Reason)
	}
	for _, x := range js {
		e.waitState(x.ID, Completed, 90*time.Second)
	}

	// Cancelled in Slurm.
	c := e.submit("alice", spec("sleep 60", "site"))[0]
	e.waitState(c.ID, Routed, 30*time.Second)
	if err := e.s.Cancel(e.ctx, c.ID, as("alice")); err != nil {
		t.Fatal(err)
	}
	e.waitState(c.ID, Cancelled, 5*time.Second)
}
