package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// flakyBackend refuses every submission.
type flakyBackend struct {
	mu    sync.Mutex
	tries int
}

func (f *flakyBackend) Capacity(context.Context) (Capacity, error) { return Capacity{FreeCPUs: 8}, nil }
func (f *flakyBackend) Submit(context.Context, *Job) (string, error) {
	f.mu.Lock()
	f.tries++
	f.mu.Unlock()
	return "", errors.New("sbatch: error: Batch job submission failed: Invalid account")
}
func (f *flakyBackend) Poll(context.Context, []*Job) ([]Update, error) { return nil, nil }
func (f *flakyBackend) Cancel(context.Context, *Job) error             { return nil }

// A domain that keeps failing is routed around once its recent failure
// rate is over half; the waiting job says so.
func TestRouterAvoidsFailingDomain(t *testing.T) {
	fb := &flakyBackend{}
	e := newSvc(t, func(c *Config) {
		c.Domains = []Domain{{Name: "site", Backend: fb}}
	})
	sp := sh("true")
	sp.Domains = []string{"site"}
	j := e.submit("alice", sp)[0]
	deadline := time.Now().Add(10 * time.Second)
	for {
		g, _ := e.s.Get(j.ID)
		if strings.Contains(g.Reason, "of its last") {
			t.Logf("after %d refusals: %s", fb.tries, g.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job reason %q after %d refusals", g.Reason, fb.tries)
		}
		time.Sleep(20 * time.Millisecond)
	}
	fb.mu.Lock()
	n := fb.tries
	fb.mu.Unlock()
	time.Sleep(300 * time.Millisecond)
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if fb.tries != n {
		t.Errorf("the router kept submitting to a failing domain (%d → %d)", n, fb.tries)
	}
}

// cgroup v2, where the machine has it (not this VM): the job's cgroup
// gets its memory limit and a CPU weight that lets backfill yield.
func TestCgroupV2Files(t *testing.T) {
	root := t.TempDir()
	if _, err := detectCgroupV2(root); err == nil {
		t.Fatal("an empty directory passed for a cgroup v2 hierarchy")
	}
	os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644)
	cg, err := detectCgroupV2(root)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "cgroup.subtree_control")); string(b) != "+memory +cpu" {
		t.Errorf("controllers not enabled for children: %q", b)
	}
	for _, c := range []struct {
		backfill bool
		weight   string
	}{{false, "200"}, {true, "1"}} {
		dir, err := cg.create("7.0", 2, 512, c.backfill)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "memory.max")); string(b) != "536870912" {
			t.Errorf("memory.max %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "cpu.weight")); string(b) != c.weight {
			t.Errorf("backfill %v: cpu.weight %q, want %s", c.backfill, b, c.weight)
		}
	}
}
