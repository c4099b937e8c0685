package local

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupV2 puts each local job in a cgroup of its own under a parent the
// box owns, where the machine has a unified (v2) hierarchy with the
// memory and cpu controllers: memory.max enforces the request and
// cpu.weight lets backfill yield to real jobs. Elsewhere (cgroup v1,
// containers without delegation) jobs get rlimits and an RSS watch.
type cgroupV2 struct {
	parent string // e.g. /sys/fs/cgroup/sitebox-jobs
}

// detectCgroupV2 returns a usable parent under root, or nil with why not.
func detectCgroupV2(root string) (*cgroupV2, error) {
	ctrl, err := os.ReadFile(filepath.Join(root, "cgroup.controllers"))
	if err != nil {
		return nil, fmt.Errorf("no cgroup v2 hierarchy at %s", root)
	}
	have := strings.Fields(string(ctrl))
	for _, want := range []string{"memory", "cpu"} {
		if !slices.Contains(have, want) {
			return nil, fmt.Errorf("cgroup v2 at %s lacks the %s controller", root, want)
		}
	}
	parent := filepath.Join(root, "sitebox-jobs")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("cannot make %s: %w", parent, err)
	}
	// Children of root (and of parent) may use the controllers only once
	// they are enabled in the subtree above them.
	for _, dir := range []string{root, parent} {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +cpu"), 0); err != nil {
			return nil, fmt.Errorf("cannot enable memory and cpu controllers in %s: %w", dir, err)
		}
	}
	return &cgroupV2{parent: parent}, nil
}

// create makes the job's cgroup with its limits and returns its path.
func (c *cgroupV2) create(id string, cpus int, memMB int64, backfill bool) (string, error) {
	dir := filepath.Join(c.parent, "job-"+id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	weight := 100 * max(cpus, 1)
	if backfill {
		weight = 1 // the lowest: backfill takes only cycles nobody else wants
	}
	settings := map[string]string{"cpu.weight": strconv.Itoa(weight)}
	if memMB > 0 {
		settings["memory.max"] = strconv.FormatInt(memMB<<20, 10)
		settings["memory.swap.max"] = "0"
	}
	for f, v := range settings {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0); err != nil && f != "memory.swap.max" {
			os.Remove(dir)
			return "", fmt.Errorf("%s: %w", f, err)
		}
	}
	return dir, nil
}

// remove deletes the job's cgroup once its processes are gone.
func (c *cgroupV2) remove(id string) {
	os.Remove(filepath.Join(c.parent, "job-"+id))
}
