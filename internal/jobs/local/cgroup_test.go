package local

import (
	"os"
	"path/filepath"
	"testing"
)

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
