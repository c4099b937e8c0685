//go:build linux

package bench

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// availableCPUs lists the CPUs this process may run on, ascending.
func availableCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("CPUs of this process: %w", err)
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// pinProcess moves every thread of this process onto cpus, so the
// processes it starts from then on run there too; restore puts them back
// where they were.
func pinProcess(cpus []int) (restore func(), err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("CPUs of this process: %w", err)
	}
	for _, c := range cpus {
		set.Set(c)
	}
	if err := setThreadsAffinity(&set); err != nil {
		setThreadsAffinity(&old)
		return nil, err
	}
	return func() { setThreadsAffinity(&old) }, nil
}

// setThreadsAffinity sets the CPUs of every thread of this process. A new
// thread takes its creator's CPUs, so threads started later follow; the
// threads are gone over again until a round finds none it has not set,
// for those started while it ran.
func setThreadsAffinity(set *unix.CPUSet) error {
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("set the CPUs of thread %d: %w", tid, err)
			}
			done[tid], fresh = true, true
		}
		if !fresh {
			return nil
		}
	}
}
