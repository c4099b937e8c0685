// Package localtest helps tests run jobs as slot users: the slot users
// themselves, directories they may reach, and a test binary that doubles
// as the job supervisor. Only tests import it.
package localtest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"sitebox/internal/jobs/local"
)

// Main lets a test binary double as the job supervisor and reaper: the
// service runs `<self> job-exec SANDBOX` and `<self> job-reap`. Call it
// from TestMain.
func Main(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "job-exec" {
		os.Exit(local.RunSupervisor(os.Args[2]))
	}
	if len(os.Args) == 2 && os.Args[1] == "job-reap" {
		os.Exit(local.RunReaper())
	}
	os.Exit(m.Run())
}

// Slots are slot users scripts/setup.sh makes for the tests. Each test
// package uses its own (a job's end kills whatever its slot user runs,
// and packages are tested in parallel): sbxslot1-2 internal/jobs,
// sbxslot3 the Slurm account, sbxslot13 internal/jobs/api, sbxslot14 the
// router-with-Slurm test, sbxslot15-16 internal/jobs/local, sbxslot21
// the tests of what a slot user leaves behind (internal/jobs, and
// internal/jobs/local's sweep, which never starts a process as it).
// Running jobs as them needs root; under CI=true their absence fails
// the test, else it skips it.
func Slots(t *testing.T, names ...string) []local.Slot {
	t.Helper()
	sl, err := local.LookupSlots(names)
	if err == nil && os.Geteuid() != 0 {
		err = errors.New("running jobs as slot users needs root")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (scripts/setup.sh makes the slot users)", err)
		}
		t.Skipf("%v (scripts/setup.sh makes the slot users)", err)
	}
	return sl
}

// ReachableDir is a temporary directory slot users may traverse (a
// t.TempDir is its creator's alone).
func ReachableDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return d
}
